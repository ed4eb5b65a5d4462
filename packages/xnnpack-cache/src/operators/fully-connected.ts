import { PACKED_ALLOCATION_ALIGNMENT, roundUp } from '../alignment.js';
import type { WeightsCacheProvider } from '../cache/provider.js';
import { NOT_FOUND } from '../cache/provider.js';
import { assertPositiveInteger, invalidArgument, WeightsCacheError } from '../errors.js';
import type { TensorView } from '../named-data-map.js';
import { PACK_F32_GEMM_GOI_W_FINGERPRINT } from '../packing/fingerprint.js';
import { type GemmGoiLayout, gemmGoiLayout, packF32GemmGoiW } from '../packing/gemm-goi.js';
import { fullyConnectedSeed } from '../packing/seed.js';
import { assertTiling, DEFAULT_GEMM_TILING, type GemmTiling } from './tiling.js';

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
  /** Operator type mixed into the seed (XNNPACK's enum value by default). */
  readonly operatorType?: number;
}

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
  /**
   * Computes `batchSize` rows: input is [batchSize][inputChannels], the result
   * [batchSize][outputChannels] (written into `output` when given).
   */
  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array;
}

function dataOf(source: WeightsSource, what: string): Float32Array {
  if (source instanceof Float32Array) return source;
  if (source !== null && typeof source === 'object' && source.data instanceof Float32Array) {
    return source.data;
  }
  return invalidArgument('a TensorView or Float32Array', what, source);
}

/**
 * Creates a fully-connected operator through the weights-cache provider, in the order
 * XNNPACK does (spec §1): key → lookUp → on a miss reserveSpace, zero-fill, pack,
 * lookUpOrInsert.
 */
export function createFullyConnectedNcF32(options: FullyConnectedOptions): FullyConnectedOperator {
  const { cache, inputChannels, outputChannels } = options;
  assertPositiveInteger(inputChannels, 'inputChannels');
  assertPositiveInteger(outputChannels, 'outputChannels');
  const tiling = options.tiling ?? DEFAULT_GEMM_TILING;
  assertTiling(tiling);
  const extraBytes = options.extraBytes ?? 0;
  if (extraBytes % 4 !== 0) invalidArgument('a multiple of 4', 'extraBytes', extraBytes);
  const kernelData = dataOf(options.kernel, 'kernel');
  if (kernelData.length !== outputChannels * inputChannels) {
    invalidArgument(`${outputChannels * inputChannels} kernel floats`, 'kernel', kernelData);
  }
  const biasSource = options.bias ?? null;
  const biasData = biasSource === null ? null : dataOf(biasSource, 'bias');
  if (biasData !== null && biasData.length !== outputChannels) {
    invalidArgument(`${outputChannels} bias floats`, 'bias', biasData);
  }

  const layout = gemmGoiLayout({
    nc: outputChannels,
    kc: inputChannels,
    nr: tiling.nr,
    kr: tiling.kr,
    sr: tiling.sr,
    extraBytes,
  });
  const alignedSize = roundUp(layout.packedBytes, PACKED_ALLOCATION_ALIGNMENT);
  const seedInput = {
    outputChannels,
    inputChannels,
    nr: tiling.nr,
    kr: tiling.kr,
    sr: tiling.sr,
    extraBytes,
  };
  const seed = fullyConnectedSeed(
    options.operatorType === undefined
      ? seedInput
      : { ...seedInput, operatorType: options.operatorType },
  );
  const key = {
    seed,
    kernel: options.kernel,
    bias: biasSource,
    fingerprint: PACK_F32_GEMM_GOI_W_FINGERPRINT,
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
    // Packing skips padding slots; they are zero only because of this fill.
    buffer.fill(0);
    packF32GemmGoiW(layout, kernelData, biasData, buffer);
    offset = cache.lookUpOrInsert(key, buffer, alignedSize);
    if (offset === NOT_FOUND) {
      throw new WeightsCacheError(
        'ERR_CACHE_OUT_OF_DATE',
        'The cache holds a different pack under the same name (out of date); operator not created',
      );
    }
  }
  return new FullyConnectedNcF32(cache, layout, tiling, offset, seed, cacheHit);
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
  /** Input rows, each padded with zeros to K', so padded weight slots multiply zeros. */
  readonly #rows: Float32Array;
  #viewOf: Uint8Array | null = null;
  #weights: Float32Array | null = null;

  constructor(
    cache: WeightsCacheProvider,
    layout: GemmGoiLayout,
    tiling: GemmTiling,
    offset: number,
    seed: number,
    cacheHit: boolean,
  ) {
    this.#cache = cache;
    this.#layout = layout;
    this.inputChannels = layout.kc;
    this.outputChannels = layout.nc;
    this.tiling = { nr: tiling.nr, kr: tiling.kr, sr: tiling.sr };
    this.offset = offset;
    this.seed = seed;
    this.cacheHit = cacheHit;
    this.#rows = new Float32Array(layout.paddedKc * ROWS_PER_PASS);
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
    return y;
  }

  #weightsView(bytes: Uint8Array): Float32Array {
    if (bytes !== this.#viewOf || this.#weights === null) {
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
