import type { GemmKernels, PreparedGemmF32 } from '@memlayer/mmap-native';
import type { WeightsCacheProvider } from '../cache/provider.js';
import { NOT_FOUND } from '../cache/provider.js';
import { assertPositiveInteger, invalidArgument, WeightsCacheError } from '../errors.js';
import type { TensorView } from '../named-data-map.js';
import { type GemmGoiLayout, packWithLayout } from '../packing/gemm-goi.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';
import { JavascriptGemm } from './javascript-gemm.js';
import type { KernelChoice } from './kernel-choice.js';
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
  /**
   * Which kernel runs: 'auto' (default) the native one of @memlayer/mmap-native's addon
   * when it loads, else the JavaScript one; 'native' (ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE
   * without the addon); 'javascript'.
   */
  readonly kernels?: KernelChoice;
  /**
   * Threads a native run may use, the calling thread included (1 to 256, default 1): the
   * addon's own pool, started on first use; small layers stay on the calling thread. The
   * JavaScript kernel always runs on the calling thread.
   */
  readonly threads?: number;
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
  /** The kernel `run` uses (see FullyConnectedOptions.kernels). */
  readonly kernels: 'native' | 'javascript';
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

/** What running a native operator takes, for a chain of them (fully-connected-chain.ts). */
export interface NativeLayer {
  readonly cache: WeightsCacheProvider;
  readonly offset: number;
  readonly layout: GemmGoiLayout;
  readonly gemm: PreparedGemmF32;
  readonly kernels: GemmKernels;
}

/** `operator`'s native layer, or null when it runs the JavaScript kernel or is not ours. */
export function nativeLayerOf(operator: FullyConnectedOperator): NativeLayer | null {
  return FullyConnectedNcF32.nativeLayerOf(operator);
}

/** Operators run only over a finalized cache (as XNNPACK's do). */
export function assertFinalized(cache: WeightsCacheProvider): void {
  if (!cache.isFinalized()) {
    throw new WeightsCacheError(
      'ERR_CACHE_INVALID_STATE',
      'Cannot run a fully-connected operator before its weights cache is finalized',
    );
  }
}

/** Checks a run's batch and input [batchSize][kc]; its output [batchSize][nc], or a new one. */
export function checkRun(
  input: Float32Array,
  batchSize: number,
  output: Float32Array | undefined,
  kc: number,
  nc: number,
): Float32Array {
  assertPositiveInteger(batchSize, 'batchSize');
  if (!(input instanceof Float32Array) || input.length < batchSize * kc) {
    invalidArgument(`a Float32Array of at least ${batchSize * kc} floats`, 'input', input);
  }
  const y = output ?? new Float32Array(batchSize * nc);
  if (!(y instanceof Float32Array) || y.length < batchSize * nc) {
    invalidArgument(`a Float32Array of at least ${batchSize * nc} floats`, 'output', y);
  }
  return y;
}

/** Never read past an entry: the region handed out must hold the whole packed layout. */
export function checkRegion(bytes: Uint8Array, layout: GemmGoiLayout): void {
  if (!(bytes instanceof Uint8Array)) tooSmall('no', layout);
  if (bytes.byteLength < layout.packedBytes) tooSmall(bytes.byteLength, layout);
}

function tooSmall(size: number | 'no', layout: GemmGoiLayout): never {
  throw new WeightsCacheError(
    'ERR_CACHE_ENTRY_TOO_SMALL',
    `The cache handed out ${size} bytes for packed weights of ${layout.packedBytes} bytes (${layout.nc}x${layout.kc})`,
  );
}

class FullyConnectedNcF32 implements FullyConnectedOperator {
  readonly inputChannels: number;
  readonly outputChannels: number;
  readonly tiling: GemmTiling;
  readonly offset: number;
  readonly seed: number;
  readonly cacheHit: boolean;
  readonly kernels: 'native' | 'javascript';
  readonly #cache: WeightsCacheProvider;
  readonly #layout: GemmGoiLayout;
  readonly #range: OutputRange | null;
  readonly #gemm: PreparedGemmF32 | null;
  readonly #kernels: GemmKernels | null;
  #javascript: JavascriptGemm | null = null;
  #viewOf: Uint8Array | null = null;
  #weights: Float32Array | null = null;

  constructor(
    cache: WeightsCacheProvider,
    setup: OperatorSetup,
    offset: number,
    cacheHit: boolean,
  ) {
    const { plan, tiling, range, gemm, execution } = setup;
    const layout = plan.gemm;
    this.#cache = cache;
    this.#layout = layout;
    this.#range = range;
    this.#gemm = gemm;
    this.#kernels = execution.native;
    this.inputChannels = layout.kc;
    this.outputChannels = layout.nc;
    this.tiling = tiling;
    this.offset = offset;
    this.seed = plan.seed;
    this.cacheHit = cacheHit;
    this.kernels = gemm === null ? 'javascript' : 'native';
  }

  get outputMin(): number {
    return this.#range === null ? Number.NEGATIVE_INFINITY : this.#range.min;
  }

  get outputMax(): number {
    return this.#range === null ? Number.POSITIVE_INFINITY : this.#range.max;
  }

  /** What a chain of native operators reads of this one (null: the JavaScript kernel runs). */
  static nativeLayerOf(operator: unknown): NativeLayer | null {
    if (typeof operator !== 'object' || operator === null || !(#gemm in operator)) return null;
    const gemm = operator.#gemm;
    const kernels = operator.#kernels;
    if (gemm === null || kernels === null) return null;
    return {
      cache: operator.#cache,
      offset: operator.offset,
      layout: operator.#layout,
      gemm,
      kernels,
    };
  }

  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array {
    assertFinalized(this.#cache);
    const { kc, nc } = this.#layout;
    const y = checkRun(input, batchSize, output, kc, nc);
    // Looked up at every run: the cache may hand back a different mapping over time.
    const bytes = this.#cache.offsetToAddr(this.offset);
    if (this.#gemm !== null) {
      if (bytes !== this.#viewOf) {
        checkRegion(bytes, this.#layout);
        this.#viewOf = bytes;
      }
      // The native kernel reads the input while it writes the output: an output over the
      // input (which the JavaScript kernel, copying rows first, allowed) reads a copy.
      const x = overlaps(input, batchSize * kc, y, batchSize * nc)
        ? input.slice(0, batchSize * kc)
        : input;
      // Prepared with this operator's layout, bounds and threads: a run checks only its
      // buffers (each layer of a model runs once per forward pass).
      this.#gemm.run(bytes, x, batchSize, y);
      return y;
    }
    this.#javascript ??= new JavascriptGemm(this.#layout);
    this.#javascript.run(this.#weightsView(bytes), input, batchSize, y);
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
}

/** Whether the first `aFloats` of a and the first `bFloats` of b share memory. */
export function overlaps(
  a: Float32Array,
  aFloats: number,
  b: Float32Array,
  bFloats: number,
): boolean {
  return (
    a.buffer === b.buffer &&
    a.byteOffset < b.byteOffset + 4 * bFloats &&
    b.byteOffset < a.byteOffset + 4 * aFloats
  );
}
