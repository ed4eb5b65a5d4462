import { resolve } from 'node:path';
import { invalidArgument } from '../errors.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';
import type { FileStorageOptions } from '../storage/file-storage.js';
import { XNNWeightsCache } from './weights-cache.js';

/**
 * Passed to every path-backed cache the manager creates; xnnpackRevision also to the
 * heap-only one.
 */
export type XNNWeightsCacheManagerOptions = Partial<Omit<FileStorageOptions, 'path'>> & {
  readonly xnnpackRevision?: XnnpackRevision;
};

/** A holder's claim on a cache; the cache is closed when the last holder releases. */
export interface WeightsCacheHandle {
  readonly cache: XNNWeightsCache;
  /** Drops this claim. Idempotent: a second call does nothing. */
  release(): void;
}

interface Instance {
  readonly cache: XNNWeightsCache;
  holders: number;
}

/**
 * One cache instance per path (ExecuTorch's XNNWeightsCacheManager::get_or_create). The empty path maps to one shared heap-only instance. Instances live while a
 * handle holds them: explicit acquire/release, not garbage-collection timing.
 */
export class XNNWeightsCacheManager {
  readonly #options: XNNWeightsCacheManagerOptions;
  readonly #instances = new Map<string, Instance>();

  constructor(options: XNNWeightsCacheManagerOptions = {}) {
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    this.#options = { ...options };
  }

  /** The cache for `path` ('' = heap only), created on first use. */
  acquire(path: string): WeightsCacheHandle {
    if (typeof path !== 'string') invalidArgument('a string', 'path', path);
    const key = path === '' ? '' : resolve(path);
    let instance = this.#instances.get(key);
    if (instance === undefined) {
      const revision = this.#options.xnnpackRevision;
      const cache =
        key === ''
          ? new XNNWeightsCache(revision === undefined ? {} : { xnnpackRevision: revision })
          : new XNNWeightsCache({ ...this.#options, path: key });
      instance = { cache, holders: 0 };
      this.#instances.set(key, instance);
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
