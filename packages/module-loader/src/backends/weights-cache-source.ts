import type { CacheAcquireOptions, XNNWeightsCache } from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';

/** A held reference to a weights-cache instance; release() when the method goes away. */
export interface WeightsCacheLease {
  readonly cache: XNNWeightsCache;
  release(): void;
}

/**
 * Where the XNNPACK backend gets cache instances: one per packed_cache_path, the empty
 * path meaning one shared heap-only instance (ExecuTorch's XNNWeightsCacheManager).
 */
export interface WeightsCacheSource {
  /** `options.maxFileBytes`: the disk budget asked for the path's file (a heap source has none). */
  acquire(path: string, options?: CacheAcquireOptions): WeightsCacheLease;
  /** Saves every live path-backed instance; returns the first error, if any. */
  saveAll(): Error | undefined;
}

/**
 * A heap-only source: every path shares one in-memory cache. Used when no file-backed
 * manager is configured; nothing is written to disk.
 */
export class HeapWeightsCacheSource implements WeightsCacheSource {
  private cache: XNNWeightsCache | undefined;
  private holders = 0;

  acquire(_path: string): WeightsCacheLease {
    this.cache ??= new (xnnpackCache().XNNWeightsCache)();
    this.holders++;
    const cache = this.cache;
    let released = false;
    return {
      cache,
      release: () => {
        if (released) return;
        released = true;
        this.holders--;
        if (this.holders === 0) this.cache = undefined;
      },
    };
  }

  saveAll(): Error | undefined {
    return undefined;
  }
}
