import { createRequire } from 'node:module';
import type * as MmapNative from '@memlayer/mmap-native';

const require = createRequire(import.meta.url);

/**
 * @memlayer/mmap-native, loaded by the first call (require of an ES module, Node ≥ 20.19), so
 * importing this package does not load it. Later calls get Node's cached module.
 */
export function mmapNative(): typeof MmapNative {
  return require('@memlayer/mmap-native') as typeof MmapNative;
}
