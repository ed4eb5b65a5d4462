// The memlayer-source variant of ./mmap-native.ts (tests, tsx): a static import, since a test
// runner's modules cannot be loaded by require. Same function, same module.
import * as MmapNative from '@memlayer/mmap-native';

export function mmapNative(): typeof MmapNative {
  return MmapNative;
}
