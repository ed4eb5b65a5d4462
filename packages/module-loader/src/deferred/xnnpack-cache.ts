import { createRequire } from 'node:module';
import type * as XnnpackCache from '@memlayer/xnnpack-cache';

const require = createRequire(import.meta.url);

/**
 * @memlayer/xnnpack-cache, loaded by the first call (require of an ES module, Node ≥ 20.19), so
 * importing this package does not load it. Later calls get Node's cached module.
 */
export function xnnpackCache(): typeof XnnpackCache {
  return require('@memlayer/xnnpack-cache') as typeof XnnpackCache;
}
