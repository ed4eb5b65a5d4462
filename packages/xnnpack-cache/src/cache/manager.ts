import { resolve } from 'node:path';
import { invalidArgument, WeightsCacheError } from '../errors.js';
import type { CpuFeatures } from '../operators/cpu-features.js';
import type { CpuFeaturesDetection } from '../operators/cpuinfo.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';
import type { FileStorageOptions } from '../storage/file-storage.js';
import { CpuTilings } from './cpu-tilings.js';
import { XNNWeightsCache } from './weights-cache.js';

/**
 * Passed to every path-backed cache the manager creates; xnnpackRevision and cpuFeatures
 * also to the heap-only one.
 */
export type XNNWeightsCacheManagerOptions = Partial<Omit<FileStorageOptions, 'path'>> & {
  readonly xnnpackRevision?: XnnpackRevision;
  /**
   * The CPU whose XNNPACK GEMM choice tiles each layer (null: unknown, nr8kr1sr1).
   * Default: the running CPU, detected once for all the manager's caches.
   */
  readonly cpuFeatures?: CpuFeatures | null;
};

/** What one holder asks of the cache of a path. */
export interface CacheAcquireOptions {
  /**
   * Disk budget of the file (FileStorage `maxFileBytes`; null: none). Undefined: the
   * manager's. The first holder of a path sets it; a later holder asking another is
   * ERR_CACHE_BUDGET_CONFLICT (one file has one budget).
   */
  readonly maxFileBytes?: number | null;
}

/** A holder's claim on a cache; the cache is closed when the last holder releases. */
export interface WeightsCacheHandle {
  readonly cache: XNNWeightsCache;
  /** Drops this claim. Idempotent: a second call does nothing. */
  release(): void;
}

interface Instance {
  readonly cache: XNNWeightsCache;
  holders: number;
  /** The budget it was opened with (null: none). */
  readonly maxFileBytes: number | null;
}

/**
 * One cache instance per path (ExecuTorch's XNNWeightsCacheManager::get_or_create). The empty path maps to one shared heap-only instance. Instances live while a
 * handle holds them: explicit acquire/release, not garbage-collection timing.
 */
export class XNNWeightsCacheManager {
  readonly #options: XNNWeightsCacheManagerOptions;
  readonly #instances = new Map<string, Instance>();
  readonly #tilings: CpuTilings;

  constructor(options: XNNWeightsCacheManagerOptions = {}) {
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    this.#options = { ...options };
    this.#tilings = new CpuTilings(options.cpuFeatures, 'options.cpuFeatures');
  }

  /** The CPU every cache of this manager packs for, and where it came from. */
  get cpuFeatures(): CpuFeaturesDetection {
    return this.#tilings.detection;
  }

  /** The cache for `path` ('' = heap only), created on first use. */
  acquire(path: string, options: CacheAcquireOptions = {}): WeightsCacheHandle {
    if (typeof path !== 'string') invalidArgument('a string', 'path', path);
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    const key = path === '' ? '' : resolve(path);
    const maxFileBytes =
      options.maxFileBytes === undefined
        ? (this.#options.maxFileBytes ?? null)
        : options.maxFileBytes;
    let instance = this.#instances.get(key);
    if (instance === undefined) {
      const revision = this.#options.xnnpackRevision;
      const cpuFeatures = this.#tilings.detection.features;
      const cache =
        key === ''
          ? new XNNWeightsCache(
              revision === undefined ? { cpuFeatures } : { xnnpackRevision: revision, cpuFeatures },
            )
          : new XNNWeightsCache({ ...this.#options, cpuFeatures, maxFileBytes, path: key });
      instance = { cache, holders: 0, maxFileBytes };
      this.#instances.set(key, instance);
    } else if (key !== '' && options.maxFileBytes !== undefined) {
      if (maxFileBytes !== instance.maxFileBytes) {
        throw new WeightsCacheError(
          'ERR_CACHE_BUDGET_CONFLICT',
          `The cache file ${key} is open with a budget of ${String(instance.maxFileBytes)} bytes; another of ${String(maxFileBytes)} bytes was asked for`,
        );
      }
    }
    instance.holders++;
    const held = instance;
    let released = false;
    return {
      cache: held.cache,
      release: () => {
        if (released) return;
        released = true;
        held.holders--;
        if (held.holders > 0) return;
        if (this.#instances.get(key) === held) this.#instances.delete(key);
        held.cache.close();
      },
    };
  }

  /** Resolved paths of live instances ('' for the heap-only one). */
  paths(): string[] {
    return [...this.#instances.keys()];
  }

  /**
   * Saves every live path-backed instance (savePackedIndex, then flush: the index is
   * durable when this returns), continuing past failures; returns the first error, or
   * undefined when all saves succeeded.
   */
  saveAll(): Error | undefined {
    let first: Error | undefined;
    for (const [key, instance] of this.#instances) {
      if (key === '') continue;
      try {
        instance.cache.savePackedIndex();
        instance.cache.flush();
      } catch (error) {
        first ??= error instanceof Error ? error : new Error(String(error));
      }
    }
    return first;
  }
}
