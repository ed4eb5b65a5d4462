import type { StorageStats } from '../storage/packed-storage.js';

/**
 * Counters and sizes reported by XNNWeightsCache.stats(): the look-up counters, the packed
 * buffers' totals and the storage's own figures (heap, file, orphan and mapped bytes,
 * fallbacks, budget, evictions; see StorageStats).
 */
export interface WeightsCacheStats extends StorageStats {
  /** lookUp calls that returned an offset. */
  readonly hits: number;
  /** lookUp calls that returned NOT_FOUND (includes unnamed look-ups and rejects). */
  readonly misses: number;
  /** Name matched but seed or fingerprint differed (stale packing): counted in misses too. */
  readonly seedRejects: number;
  /**
   * Name, seed and fingerprint matched but the stored layout or size differed from the
   * key's (e.g. two shapes whose XOR seeds collide): counted in misses too.
   */
  readonly layoutRejects: number;
  /**
   * Name, seed and size matched an entry that stores no layout (a v2 file's) while another
   * shape of the key's weight count has that seed and size too: counted in misses too.
   */
  readonly ambiguousRejects: number;
  /** Named entries. */
  readonly entries: number;
  /** Live packed buffers without a name (never persisted). */
  readonly unnamedEntries: number;
  /** Sum of dataSize over every live packed buffer, named or not. */
  readonly packedBytes: number;
}

/** The cache's own counters, reported as they are. */
export interface LookUpCounters {
  readonly hits: number;
  readonly misses: number;
  readonly seedRejects: number;
  readonly layoutRejects: number;
  readonly ambiguousRejects: number;
  readonly entries: number;
}

/** Stats of a cache: its counters, its packed buffers' totals and its storage's figures. */
export function weightsCacheStats(
  counters: LookUpCounters,
  slots: { readonly packedBytes: number; readonly unnamedEntries: number },
  storage: StorageStats,
): WeightsCacheStats {
  return {
    ...counters,
    unnamedEntries: slots.unnamedEntries,
    packedBytes: slots.packedBytes,
    heapBytes: storage.heapBytes,
    fileBytes: storage.fileBytes,
    orphanBytes: storage.orphanBytes,
    mappedBytes: storage.mappedBytes,
    ...(storage.fallback === undefined ? {} : { fallback: storage.fallback }),
    ...(storage.maxFileBytes === undefined ? {} : { maxFileBytes: storage.maxFileBytes }),
    ...(storage.evicted === undefined ? {} : { evicted: storage.evicted }),
  };
}
