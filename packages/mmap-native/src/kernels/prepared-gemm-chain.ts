// Prepared GEMMs run one after another in one call to the addon, each layer's output the
// next one's input (src/native/kernels/gemm-chain.cc): what a model's chain of
// fully-connected layers costs without a JavaScript call and a crossing into the addon
// per layer. Each layer runs with its own plan, so the outputs are the bits of running
// each layer's PreparedGemmF32 in turn.
import { expectObject, fail } from '../validate.js';
import { checkInput, checkPacked, outputFor } from './gemm-checks.js';
import { type NativeGemmPlan, PreparedGemm, type PreparedGemmF32 } from './prepared-gemm.js';

/** One layer of a chain: its prepared GEMM and the packed weights it runs on. */
export interface GemmChainLayer {
  /** Made by the same kernels' prepareGemmF32. */
  readonly gemm: PreparedGemmF32;
  /**
   * Its weights, held by the chain. A view of a mapped window may be unmapped later: every
   * run checks each view is still attached and large enough (a RangeError if not).
   */
  readonly packed: Uint8Array | ArrayBuffer;
}

/** Layers run in one call: input [batch][kc] → output [batch][nc]. */
export interface PreparedGemmChainF32 {
  /** How many layers it runs. */
  readonly layerCount: number;
  /** Floats of an input row: the first layer's kc. */
  readonly kc: number;
  /** Floats of an output row: the last layer's nc. */
  readonly nc: number;
  /**
   * Runs every layer on `batch` rows of `input`; the result goes into `output` (at least
   * batch·nc floats, overlapping neither the input nor the last layer's weights) or a new
   * array. Returns the output.
   */
  run(input: Float32Array, batch: number, output?: Float32Array): Float32Array;
}

/** The addon's chain: opaque here. */
export type NativeGemmChain = object;

/** src/native/kernels/gemm-chain-binding.cc's functions. */
export interface NativeGemmChainFunctions {
  gemmF32Chain(
    plans: readonly NativeGemmPlan[],
    packed: readonly (Uint8Array | ArrayBuffer)[],
  ): NativeGemmChain;
  gemmF32ChainRun(
    chain: NativeGemmChain,
    input: Float32Array,
    output: Float32Array,
    batch: number,
  ): void;
}

/** Checks `layers` (each a prepared GEMM of these kernels, each one's kc the last one's nc). */
export function prepareGemmChain(
  native: NativeGemmChainFunctions,
  layers: readonly GemmChainLayer[],
): PreparedGemmChainF32 {
  if (!Array.isArray(layers)) fail('ERR_INVALID_ARG_TYPE', 'an array', 'layers', layers);
  if (layers.length === 0) fail('ERR_INVALID_ARG_VALUE', 'at least one layer', 'layers', layers);
  const plans: NativeGemmPlan[] = [];
  const packed: (Uint8Array | ArrayBuffer)[] = [];
  let previous: PreparedGemmF32 | undefined;
  for (let i = 0; i < layers.length; i++) {
    const layer = expectObject(layers[i] ?? null, `layers[${i}]`);
    const gemm = layer['gemm'] as PreparedGemmF32;
    const plan = PreparedGemm.planOf(gemm);
    if (plan === undefined) {
      fail('ERR_INVALID_ARG_TYPE', 'a GEMM made by prepareGemmF32', `layers[${i}].gemm`, gemm);
    }
    checkPacked(layer['packed'], gemm.packedBytes, `layers[${i}].packed`);
    if (previous !== undefined && gemm.layout.kc !== previous.layout.nc) {
      fail(
        'ERR_INVALID_ARG_VALUE',
        `kc = ${previous.layout.nc}, the nc of layers[${i - 1}]`,
        `layers[${i}].gemm.layout.kc`,
        gemm.layout.kc,
      );
    }
    plans.push(plan);
    packed.push(layer['packed'] as Uint8Array | ArrayBuffer);
    previous = gemm;
  }
  const { kc } = (layers[0] as GemmChainLayer).gemm.layout;
  const { nc } = (layers[layers.length - 1] as GemmChainLayer).gemm.layout;
  const chain = native.gemmF32Chain(plans, packed);
  return new PreparedGemmChain(native, chain, layers.length, kc, nc);
}

class PreparedGemmChain implements PreparedGemmChainF32 {
  readonly layerCount: number;
  readonly kc: number;
  readonly nc: number;
  readonly #native: NativeGemmChainFunctions;
  readonly #chain: NativeGemmChain;

  constructor(
    native: NativeGemmChainFunctions,
    chain: NativeGemmChain,
    layerCount: number,
    kc: number,
    nc: number,
  ) {
    this.layerCount = layerCount;
    this.kc = kc;
    this.nc = nc;
    this.#native = native;
    this.#chain = chain;
  }

  run(input: Float32Array, batch: number, output?: Float32Array): Float32Array {
    checkInput(input, batch, this.kc);
    const y = outputFor(output, batch, this.nc, 'output');
    // The addon checks every layer's weights: they may have been unmapped since.
    this.#native.gemmF32ChainRun(this.#chain, input, y, batch);
    return y;
  }
}
