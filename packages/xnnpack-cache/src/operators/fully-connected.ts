import type { WeightsCacheProvider } from '../cache/provider.js';
import { NOT_FOUND } from '../cache/provider.js';
import { assertPositiveInteger, invalidArgument, WeightsCacheError } from '../errors.js';
import type { TensorView } from '../named-data-map.js';
import { type GemmGoiLayout, packWithLayout } from '../packing/gemm-goi.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';
import { type OperatorSetup, operatorSetup } from './operator-setup.js';
import { clampOutputs, type OutputRange } from './output-range.js';
import type { GemmTiling } from './tiling.js';

/** Unpacked weights: a view from loadUnpackedData (cached by name) or a bare array (unnamed). */
export type WeightsSource = TensorView | Float32Array;

export interface FullyConnectedOptions {
  readonly cache: WeightsCacheProvider;
  readonly inputChannels: number;
  readonly outputChannels: number;
  /** Kernel [outputChannels][inputChannels], row-major. */
  readonly kernel: WeightsSource;
  /** Bias [outputChannels], or null/omitted. */
  readonly bias?: WeightsSource | null;
  readonly tiling?: GemmTiling;
  /** Bytes after each packed block; must be a multiple of 4 for this operator. */
  readonly extraBytes?: number;
  /**
   * XNNPACK revision whose operator type goes into the seed (default: the cache's
   * xnnpackRevision, else '92a7ad50').
   */
  readonly xnnpackRevision?: XnnpackRevision;
  /** Operator type mixed into the seed; overrides xnnpackRevision. */
  readonly operatorType?: number;
  /**
   * Outputs below are raised to it, after the bias (XNNPACK's output_min; default
   * -Infinity). NaN, or above outputMax, is ERR_CACHE_INVALID_OUTPUT_RANGE.
   */
  readonly outputMin?: number;
  /** Outputs above are lowered to it, after the bias (XNNPACK's output_max; default +Infinity). */
  readonly outputMax?: number;
}

/** Everything an operator is created with but its weights. */
export type FullyConnectedSettings = Omit<FullyConnectedOptions, 'kernel' | 'bias'>;

/** y = x·Wᵀ + b over rows of x, reading W and b from the cache's packed layout. */
export interface FullyConnectedOperator {
  readonly inputChannels: number;
  readonly outputChannels: number;
  readonly tiling: GemmTiling;
  /** Offset of the packed weights in the cache. */
  readonly offset: number;
  readonly seed: number;
  /** True when creation found the packed weights in the cache (nothing was packed). */
  readonly cacheHit: boolean;
  /** Clamping bounds applied to every output (as float32; ±Infinity when unset). */
  readonly outputMin: number;
  readonly outputMax: number;
  /**
   * Computes `batchSize` rows: input is [batchSize][inputChannels], the result
   * [batchSize][outputChannels] (written into `output` when given).
   */
  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array;
}

/** Element count of a weights source, from its shape: a hit must not touch `view.data`. */
function elementsOf(source: WeightsSource, what: string): number {
  if (source instanceof Float32Array) return source.length;
  if (source !== null && typeof source === 'object' && Array.isArray(source.shape)) {
    const shape = source.shape;
    let elements = 1;
    for (let i = 0; i < shape.length; i++) elements *= shape[i] as number;
    return elements;
  }
  return invalidArgument('a TensorView or Float32Array', what, source);
}

/** The floats to pack (a TensorView's data may be a lazy getter that maps a file). */
function dataOf(source: WeightsSource, elements: number, what: string): Float32Array {
  const data = source instanceof Float32Array ? source : source.data;
  if (!(data instanceof Float32Array) || data.length !== elements) {
    invalidArgument(`a Float32Array of ${elements} floats`, `${what} data`, data);
  }
  return data;
}

/**
 * Creates a fully-connected operator through the weights-cache provider, in the order
 * XNNPACK does: key → lookUp → on a miss reserveSpace, zero-fill, pack, lookUpOrInsert.
 * The key carries the full packing layout and packed size, so a hit never serves a pack
 * of another shape whose seed collides. The unpacked views are handed back to the cache
 * (releaseUnpackedData) as soon as the operator exists, hit or miss.
 */
export function createFullyConnectedNcF32(options: FullyConnectedOptions): FullyConnectedOperator {
  return createWithWeights(
    options.cache,
    options.kernel,
    options.bias ?? null,
    operatorSetup(options),
  );
}

/** createFullyConnectedNcF32 once its options (all but the weights) are set up. */
export function createWithWeights(
  cache: WeightsCacheProvider,
  kernel: WeightsSource,
  biasSource: WeightsSource | null,
  setup: OperatorSetup,
): FullyConnectedOperator {
  const { plan } = setup;
  const { nc: outputChannels, kc: inputChannels } = plan.gemm;
  const kernelElements = outputChannels * inputChannels;
  if (elementsOf(kernel, 'kernel') !== kernelElements) {
    invalidArgument(`${kernelElements} kernel elements`, 'kernel', kernel);
  }
  if (biasSource !== null && elementsOf(biasSource, 'bias') !== outputChannels) {
    invalidArgument(`${outputChannels} bias elements`, 'bias', biasSource);
  }
  const { alignedSize, shapeKey } = plan;
  // The plan's shape key plus this layer's weights (fields listed: no spread per layer).
  const key = {
    seed: shapeKey.seed,
    fingerprint: shapeKey.fingerprint,
    layout: shapeKey.layout,
    packedSize: shapeKey.packedSize,
    ambiguousWithoutLayout: shapeKey.ambiguousWithoutLayout,
    kernel,
    bias: biasSource,
  };

  let offset = cache.lookUp(key);
  const cacheHit = offset !== NOT_FOUND;
  if (!cacheHit) {
    const buffer = cache.reserveSpace(alignedSize);
    if (buffer === null) {
      throw new WeightsCacheError(
        'ERR_CACHE_OUT_OF_MEMORY',
        `Failed to reserve ${alignedSize} bytes for packed fully-connected weights`,
      );
    }
    // Packing skips padding slots; they are zero only because of this fill (fresh file
    // pages already are).
    if (cache.isReservedZeroed?.(buffer) !== true) buffer.fill(0);
    const kernelData = dataOf(kernel, kernelElements, 'kernel');
    const biasData = biasSource === null ? null : dataOf(biasSource, outputChannels, 'bias');
    packWithLayout(plan.gemm, kernelData, biasData, buffer);
    offset = cache.lookUpOrInsert(key, buffer, alignedSize);
    if (offset === NOT_FOUND) {
      throw new WeightsCacheError(
        'ERR_CACHE_OUT_OF_DATE',
        'The cache holds a different pack under the same name (out of date); operator not created',
      );
    }
  }
  // The unpacked weights are no longer needed: free them now, not at finalize.
  if (cache.releaseUnpackedData !== undefined) {
    if (!(kernel instanceof Float32Array)) cache.releaseUnpackedData(kernel);
    if (biasSource !== null && !(biasSource instanceof Float32Array)) {
      cache.releaseUnpackedData(biasSource);
    }
  }
  return operatorAt(cache, setup, offset, cacheHit);
}

/** The operator over the packed entry at `offset`, once its region is checked. */
export function operatorAt(
  cache: WeightsCacheProvider,
  setup: OperatorSetup,
  offset: number,
  cacheHit: boolean,
): FullyConnectedOperator {
  if (cacheHit) {
    // A cache that knows the entry's size is asked for it: the bytes are checked again,
    // and first viewed, when the operator first runs.
    const gemm = setup.plan.gemm;
    if (cache.packedSizeAt === undefined) checkRegion(cache.offsetToAddr(offset), gemm);
    else {
      const size = cache.packedSizeAt(offset);
      if (size < gemm.packedBytes) tooSmall(size, gemm);
    }
  }
  return new FullyConnectedNcF32(cache, setup, offset, cacheHit);
}

/** Never read past an entry: the region handed out must hold the whole packed layout. */
function checkRegion(bytes: Uint8Array, layout: GemmGoiLayout): void {
  if (!(bytes instanceof Uint8Array)) tooSmall('no', layout);
  if (bytes.byteLength < layout.packedBytes) tooSmall(bytes.byteLength, layout);
}

function tooSmall(size: number | 'no', layout: GemmGoiLayout): never {
  throw new WeightsCacheError(
    'ERR_CACHE_ENTRY_TOO_SMALL',
    `The cache handed out ${size} bytes for packed weights of ${layout.packedBytes} bytes (${layout.nc}x${layout.kc})`,
  );
}

/** Rows computed together by one pass over the packed weights. */
const ROWS_PER_PASS = 4;

class FullyConnectedNcF32 implements FullyConnectedOperator {
  readonly inputChannels: number;
  readonly outputChannels: number;
  readonly tiling: GemmTiling;
  readonly offset: number;
  readonly seed: number;
  readonly cacheHit: boolean;
  readonly #cache: WeightsCacheProvider;
  readonly #layout: GemmGoiLayout;
  readonly #range: OutputRange | null;
  /**
   * Input rows, each padded with zeros to K', so padded weight slots multiply zeros.
   * Created at the first run: a model's operators are created long before they all run.
   */
  #rows: Float32Array | null = null;
  #viewOf: Uint8Array | null = null;
  #weights: Float32Array | null = null;

  constructor(
    cache: WeightsCacheProvider,
    setup: OperatorSetup,
    offset: number,
    cacheHit: boolean,
  ) {
    const { plan, tiling, range } = setup;
    const layout = plan.gemm;
    this.#cache = cache;
    this.#layout = layout;
    this.#range = range;
    this.inputChannels = layout.kc;
    this.outputChannels = layout.nc;
    this.tiling = tiling;
    this.offset = offset;
    this.seed = plan.seed;
    this.cacheHit = cacheHit;
  }

  get outputMin(): number {
    return this.#range === null ? Number.NEGATIVE_INFINITY : this.#range.min;
  }

  get outputMax(): number {
    return this.#range === null ? Number.POSITIVE_INFINITY : this.#range.max;
  }

  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array {
    if (!this.#cache.isFinalized()) {
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_STATE',
        'Cannot run a fully-connected operator before its weights cache is finalized',
      );
    }
    assertPositiveInteger(batchSize, 'batchSize');
    const { kc, nc } = this.#layout;
    if (!(input instanceof Float32Array) || input.length < batchSize * kc) {
      invalidArgument(`a Float32Array of at least ${batchSize * kc} floats`, 'input', input);
    }
    const y = output ?? new Float32Array(batchSize * nc);
    if (!(y instanceof Float32Array) || y.length < batchSize * nc) {
      invalidArgument(`a Float32Array of at least ${batchSize * nc} floats`, 'output', y);
    }
    // Looked up at every run: the cache may hand back a different mapping over time.
    const w = this.#weightsView(this.#cache.offsetToAddr(this.offset));
    this.#rows ??= new Float32Array(this.#layout.paddedKc * ROWS_PER_PASS);
    const rows = this.#rows;
    const kPadded = this.#layout.paddedKc;
    let r = 0;
    // Four rows per pass over the packed weights: each weight load feeds four products.
    for (; r + ROWS_PER_PASS <= batchSize; r += ROWS_PER_PASS) {
      for (let i = 0; i < ROWS_PER_PASS; i++) {
        rows.set(input.subarray((r + i) * kc, (r + i + 1) * kc), i * kPadded);
      }
      this.#runRows4(w, rows, y, r * nc);
    }
    for (; r < batchSize; r++) {
      rows.set(input.subarray(r * kc, r * kc + kc));
      this.#runRow(w, rows, y, r * nc);
    }
    if (this.#range !== null) clampOutputs(y, batchSize * nc, this.#range);
    return y;
  }

  #weightsView(bytes: Uint8Array): Float32Array {
    if (bytes !== this.#viewOf || this.#weights === null) {
      checkRegion(bytes, this.#layout);
      this.#weights = new Float32Array(
        bytes.buffer,
        bytes.byteOffset,
        this.#layout.packedBytes / 4,
      );
      this.#viewOf = bytes;
    }
    return this.#weights;
  }

  #runRow(w: Float32Array, x: Float32Array, y: Float32Array, yAt: number): void {
    const { nc, nr, kr, sr, paddedKc, blockBytes } = this.#layout;
    const mask = sr * kr - 1;
    const blockFloats = blockBytes / 4;
    // Floats between consecutive kr-steps of the same row: one slot per row of the block.
    const stepStride = nr * kr;
    let blockStart = 0;
    for (let n0 = 0; n0 < nc; n0 += nr) {
      const b = Math.min(nr, nc - n0);
      const kStart = blockStart + nr;
      let o = 0;
      if (sr === 1) {
        // Unshuffled: four neighbouring rows read the same columns, so share each x load.
        for (; o + 4 <= b; o += 4) {
          let a0 = w[blockStart + o] as number;
          let a1 = w[blockStart + o + 1] as number;
          let a2 = w[blockStart + o + 2] as number;
          let a3 = w[blockStart + o + 3] as number;
          let p = kStart + o * kr;
          for (let t = 0; t < paddedKc; t += kr) {
            for (let j = 0; j < kr; j++) {
              const xv = x[t + j] as number;
              a0 += (w[p + j] as number) * xv;
              a1 += (w[p + kr + j] as number) * xv;
              a2 += (w[p + 2 * kr + j] as number) * xv;
              a3 += (w[p + 3 * kr + j] as number) * xv;
            }
            p += stepStride;
          }
          const at = yAt + n0 + o;
          y[at] = a0;
          y[at + 1] = a1;
          y[at + 2] = a2;
          y[at + 3] = a3;
        }
      }
      for (; o < b; o++) {
        let acc = w[blockStart + o] as number;
        let p = kStart + o * kr;
        for (let t = 0; t < paddedKc; t += kr) {
          // Shuffled tilings rotate the columns of row o within each sr·kr group.
          const col = sr === 1 ? t : (t & ~mask) + ((t + o * kr) & mask);
          for (let j = 0; j < kr; j++) acc += (w[p + j] as number) * (x[col + j] as number);
          p += stepStride;
        }
        y[yAt + n0 + o] = acc;
      }
      blockStart += blockFloats;
    }
  }

  /** Same as #runRow for rows x[0..4) laid out K' floats apart. */
  #runRows4(w: Float32Array, x: Float32Array, y: Float32Array, yAt: number): void {
    const { nc, nr, kr, sr, paddedKc, blockBytes } = this.#layout;
    const mask = sr * kr - 1;
    const blockFloats = blockBytes / 4;
    const stepStride = nr * kr;
    const x1 = paddedKc;
    const x2 = 2 * paddedKc;
    const x3 = 3 * paddedKc;
    let blockStart = 0;
    for (let n0 = 0; n0 < nc; n0 += nr) {
      const b = Math.min(nr, nc - n0);
      const kStart = blockStart + nr;
      for (let o = 0; o < b; o++) {
        const bias = w[blockStart + o] as number;
        let a0 = bias;
        let a1 = bias;
        let a2 = bias;
        let a3 = bias;
        let p = kStart + o * kr;
        for (let t = 0; t < paddedKc; t += kr) {
          const col = sr === 1 ? t : (t & ~mask) + ((t + o * kr) & mask);
          for (let j = 0; j < kr; j++) {
            const wv = w[p + j] as number;
            const c = col + j;
            a0 += wv * (x[c] as number);
            a1 += wv * (x[x1 + c] as number);
            a2 += wv * (x[x2 + c] as number);
            a3 += wv * (x[x3 + c] as number);
          }
          p += stepStride;
        }
        const at = yAt + n0 + o;
        y[at] = a0;
        y[at + nc] = a1;
        y[at + 2 * nc] = a2;
        y[at + 3 * nc] = a3;
      }
      blockStart += blockFloats;
    }
  }
}
