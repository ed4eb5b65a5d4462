import type { TensorView } from '../named-data-map.js';
import type { GemmTiling } from '../operators/tiling.js';
import type { PackingLayout } from '../packing/packing-layout.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';

/**
 * The weights-cache provider contract an operator talks to (XNNPACK's
 * xnn_weights_cache_provider). Offsets are indices into the cache's list of packed
 * buffers, not byte offsets.
 */

/** XNN_CACHE_NOT_FOUND (SIZE_MAX upstream). */
export const NOT_FOUND = -1;

/** What a stored entry must match besides its name: the same for every layer of one shape. */
export interface PackedShapeKey {
  /** u32 from the operator's shape and tiling; a different ukernel gives a different seed. */
  readonly seed: number;
  /** u32 identifying the packing algorithm (ours; upstream has only the seed). */
  readonly fingerprint: number;
  /**
   * The full packing layout. A stored entry with a layout hits only when it is equal
   * (the seed XORs shape numbers, so different shapes can share one).
   */
  readonly layout?: PackingLayout;
  /** Bytes the operator will read (what it inserts on a miss); a hit needs dataSize equal. */
  readonly packedSize?: number;
  /**
   * Another shape gives the same seed and packed size: a stored entry without a layout
   * (a v2 file's) may be that shape's packing, so it is a miss, never a hit.
   */
  readonly ambiguousWithoutLayout?: boolean;
}

export interface LookUpKey extends PackedShapeKey {
  /** The unpacked kernel, by identity: the view returned by loadUnpackedData (or any object). */
  readonly kernel: object;
  /** The unpacked bias by identity, or null. */
  readonly bias: object | null;
}

export interface WeightsCacheProvider {
  lookUp(key: LookUpKey): number;
  reserveSpace(n: number): Uint8Array | null;
  lookUpOrInsert(key: LookUpKey, packed: Uint8Array | null, size: number): number;
  isFinalized(): boolean;
  offsetToAddr(offset: number): Uint8Array;
  /**
   * The size of the packed buffer at `offset` without handing out its bytes (a loaded
   * entry's view is then made only when an operator first runs). Optional: without it an
   * operator checks offsetToAddr(offset).byteLength.
   */
  packedSizeAt?(offset: number): number;
  deleteCache(): void;
  /** XNNPACK revision whose operator types seed this cache's operators (default: the newest). */
  readonly xnnpackRevision?: XnnpackRevision;
  /**
   * Tiling of a layer of `outputChannels` whose operator names none. Optional: without it
   * such a layer is packed nr8kr1sr1 (DEFAULT_GEMM_TILING).
   */
  gemmTiling?(outputChannels: number): GemmTiling;
  /** True when `buffer` (from reserveSpace) is known to be zero already: no zero-fill needed. */
  isReservedZeroed?(buffer: Uint8Array): boolean;
  /**
   * The operator no longer needs this unpacked view (it is packed or found): the named
   * data map may free it now instead of at finalize.
   */
  releaseUnpackedData?(view: TensorView): void;
}

/**
 * A provider that also serves unpacked tensors by name (XNNWeightsCache does): operators
 * can then be created from tensor names, and a hit needs no unpacked view at all.
 */
export interface NamedWeightsCacheProvider extends WeightsCacheProvider {
  loadUnpackedData(name: string): TensorView;
  /**
   * lookUp for the tensors loadUnpackedData would load under these names, without loading
   * them: the entry's offset on a hit (counted and marked used as lookUp does), else
   * NOT_FOUND with nothing counted: the caller then loads the views and looks up as usual.
   */
  lookUpByName?(kernelName: string, biasName: string | null, key: PackedShapeKey): number;
}
