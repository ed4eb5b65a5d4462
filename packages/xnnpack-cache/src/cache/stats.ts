/** Counters and sizes reported by XNNWeightsCache.stats(). */
export interface WeightsCacheStats {
  /** lookUp calls that returned an offset. */
  readonly hits: number;
  /** lookUp calls that returned NOT_FOUND (includes unnamed look-ups and seed rejects). */
  readonly misses: number;
  /** Name matched but seed or fingerprint differed (stale packing): counted in misses too. */
  readonly seedRejects: number;
  /** Named entries. */
  readonly entries: number;
  /** Live packed buffers without a name (never persisted). */
  readonly unnamedEntries: number;
  /** Sum of dataSize over every live packed buffer, named or not. */
  readonly packedBytes: number;
  readonly heapBytes: number;
  readonly fileBytes: number;
  readonly orphanBytes: number;
  readonly mappedBytes: number;
}
