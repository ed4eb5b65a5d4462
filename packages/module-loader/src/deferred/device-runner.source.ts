// The memlayer-source variant of ./device-runner.ts (tests, tsx): a static import, since a test
// runner's modules cannot be loaded by require. Same function, same module.
import * as DeviceRunnerPackage from '@memlayer/device-runner';

export function deviceRunner(): typeof DeviceRunnerPackage {
  return DeviceRunnerPackage;
}
