// The memlayer-source variant of ./xnnpack-cache.ts (tests, tsx): a static import, since a test
// runner's modules cannot be loaded by require. Same function, same module.
import * as XnnpackCache from '@memlayer/xnnpack-cache';

export function xnnpackCache(): typeof XnnpackCache {
  return XnnpackCache;
}
