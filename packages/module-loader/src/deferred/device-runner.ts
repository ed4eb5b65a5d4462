import { createRequire } from 'node:module';
import type * as DeviceRunnerPackage from '@memlayer/device-runner';

const require = createRequire(import.meta.url);

/**
 * @memlayer/device-runner, loaded by the first call (require of an ES module, Node ≥ 20.19), so
 * importing this package does not load it. Later calls get Node's cached module.
 */
export function deviceRunner(): typeof DeviceRunnerPackage {
  return require('@memlayer/device-runner') as typeof DeviceRunnerPackage;
}
