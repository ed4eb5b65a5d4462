/**
 * The weights-cache provider contract an operator talks to (XNNPACK's
 * xnn_weights_cache_provider, spec §1). Offsets are indices into the cache's list
 * of packed buffers, not byte offsets.
 */

/** XNN_CACHE_NOT_FOUND (SIZE_MAX upstream). */
export const NOT_FOUND = -1;

export interface LookUpKey {
  /** u32 from the operator's shape and tiling; a different ukernel gives a different seed. */
  readonly seed: number;
  /** The unpacked kernel, by identity: the view returned by loadUnpackedData (or any object). */
  readonly kernel: object;
  /** The unpacked bias by identity, or null. */
  readonly bias: object | null;
  /** u32 identifying the packing algorithm (ours; upstream has only the seed). */
  readonly fingerprint: number;
}

export interface WeightsCacheProvider {
  lookUp(key: LookUpKey): number;
  reserveSpace(n: number): Uint8Array | null;
  lookUpOrInsert(key: LookUpKey, packed: Uint8Array | null, size: number): number;
  isFinalized(): boolean;
  offsetToAddr(offset: number): Uint8Array;
  deleteCache(): void;
}
