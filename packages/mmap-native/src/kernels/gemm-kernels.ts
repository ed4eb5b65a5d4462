// The addon's f32 GEMM kernels over weights packed in XNNPACK's GEMM layout, read in place
// (src/native/kernels/). Arguments are checked here first, for messages in this package's
// style; the addon checks them again, so no call can make it read or write out of bounds.
import { tryLoadAddon } from '../backends/posix/addon.js';
import {
  expectFloat32Array,
  expectInteger,
  expectNumber,
  expectObject,
  expectOneOf,
  fail,
} from '../validate.js';
import { BEST_GEMM_ISA_CODE, GEMM_ISA_CODES, type GemmIsa } from './gemm-isa.js';

/**
 * The shape and tiling of weights packed by XNNPACK's xnn_pack_f32_gemm_goi_w (one group):
 * per block of nr output channels, nr bias floats, then kr-wide slots of every input
 * column up to kc rounded up to sr·kr (shuffled within sr·kr columns when sr > 1), then
 * extraBytes.
 */
export interface PackedGemmLayout {
  /** Output channels: the columns of the result. */
  readonly nc: number;
  /** Input channels: the floats of one input row. */
  readonly kc: number;
  readonly nr: number;
  readonly kr: number;
  /** sr·kr must be a power of two. */
  readonly sr: number;
  /** Bytes after each block (a multiple of 4; default 0). */
  readonly extraBytes?: number | undefined;
}

export interface GemmF32Options {
  /** Where the [batch][nc] result goes (at least batch·nc floats; default: a new array). */
  readonly output?: Float32Array | undefined;
  /** Outputs below (and NaN) become it, after the bias (default -Infinity). As float32. */
  readonly outputMin?: number | undefined;
  /** Outputs above become it, after the bias (default +Infinity). As float32. */
  readonly outputMax?: number | undefined;
  /**
   * Threads of the addon's own pool that may share the work, the calling thread included:
   * 1 to 256 (default 1, no pool). Small problems run on the calling thread anyway.
   */
  readonly threads?: number | undefined;
  /** An instruction set of `isas` to use instead of `isa` (to compare or test kernels). */
  readonly isa?: GemmIsa | undefined;
}

export interface GemmKernels {
  /** The instruction set gemmF32 uses: the widest this CPU has. */
  readonly isa: GemmIsa;
  /** The instruction sets this CPU runs the kernels with, widest first ('portable' last). */
  readonly isas: readonly GemmIsa[];
  /**
   * output[batch][nc] = input[batch][kc] · Wᵀ + bias, clamped to [outputMin, outputMax]
   * unless both are infinite. `packed` holds the packed weights from its first byte (at a
   * multiple of 4 bytes) and is read in place, never copied. The output may not overlap
   * the input or the weights. Returns the output.
   */
  gemmF32(
    packed: Uint8Array | ArrayBuffer,
    layout: PackedGemmLayout,
    input: Float32Array,
    batch: number,
    options?: GemmF32Options,
  ): Float32Array;
}

/** The functions src/native/kernels/gemm-binding.cc adds to the addon. */
interface KernelsAddon {
  gemmF32(
    packed: Uint8Array | ArrayBuffer,
    input: Float32Array,
    output: Float32Array,
    batch: number,
    nc: number,
    kc: number,
    nr: number,
    kr: number,
    sr: number,
    extraBytes: number,
    outputMin: number,
    outputMax: number,
    threads: number,
    isa: number,
  ): void;
  gemmIsas(): GemmIsa[];
}

const MAX_DIMENSION = 2 ** 31 - 1;
const MAX_TILE = 4096;
const MAX_THREADS = 256;

/**
 * The GEMM kernels, or null when there is no addon (a machine without the prebuilt addon
 * or a compiler, where the heap backend is used) or the addon predates them. An addon
 * that exists but does not load is thrown, as by the posix backend.
 */
export function loadGemmKernels(): GemmKernels | null {
  const addon = tryLoadAddon() as unknown as Partial<KernelsAddon> | null;
  if (addon === null || typeof addon.gemmF32 !== 'function' || addon.gemmIsas === undefined) {
    return null;
  }
  const native = addon as KernelsAddon;
  const isas = Object.freeze(native.gemmIsas());
  return Object.freeze({
    isa: isas[0] as GemmIsa,
    isas,
    gemmF32: (
      packed: Uint8Array | ArrayBuffer,
      layout: PackedGemmLayout,
      input: Float32Array,
      batch: number,
      options?: GemmF32Options,
    ) => gemmF32(native, isas, packed, layout, input, batch, options),
  });
}

function gemmF32(
  native: KernelsAddon,
  isas: readonly GemmIsa[],
  packed: Uint8Array | ArrayBuffer,
  layout: PackedGemmLayout,
  input: Float32Array,
  batch: number,
  options: GemmF32Options | undefined,
): Float32Array {
  const { nc, kc, nr, kr, sr, extraBytes } = checkLayout(layout);
  const packedBytes = packedByteLength(packed);
  const blocks = Math.ceil(nc / nr);
  const paddedKc = Math.ceil(kc / (sr * kr)) * sr * kr;
  const needed = blocks * (nr * (1 + paddedKc) * 4 + extraBytes);
  if (packedBytes < needed) {
    fail('ERR_OUT_OF_RANGE', `at least ${needed} bytes of packed weights`, 'packed', packed);
  }
  expectInteger(batch, 'batch', 1, MAX_DIMENSION);
  expectFloat32Array(input, 'input');
  if (input.length < batch * kc) {
    fail('ERR_OUT_OF_RANGE', `at least batch·kc = ${batch * kc} floats`, 'input', input);
  }
  const settings = expectObject(options, 'options') as GemmF32Options;
  let output = settings.output;
  if (output === undefined) output = new Float32Array(batch * nc);
  else {
    expectFloat32Array(output, 'options.output');
    if (output.length < batch * nc) {
      fail(
        'ERR_OUT_OF_RANGE',
        `at least batch·nc = ${batch * nc} floats`,
        'options.output',
        output,
      );
    }
  }
  const outputMin =
    settings.outputMin === undefined
      ? Number.NEGATIVE_INFINITY
      : Math.fround(expectNumber(settings.outputMin, 'options.outputMin'));
  const outputMax =
    settings.outputMax === undefined
      ? Number.POSITIVE_INFINITY
      : Math.fround(expectNumber(settings.outputMax, 'options.outputMax'));
  if (outputMin > outputMax) {
    fail(
      'ERR_OUT_OF_RANGE',
      `a number >= outputMin (${outputMin})`,
      'options.outputMax',
      outputMax,
    );
  }
  const threads =
    settings.threads === undefined
      ? 1
      : expectInteger(settings.threads, 'options.threads', 1, MAX_THREADS);
  const isa =
    settings.isa === undefined
      ? BEST_GEMM_ISA_CODE
      : GEMM_ISA_CODES.indexOf(expectOneOf(settings.isa, 'options.isa', isas));
  native.gemmF32(
    packed,
    input,
    output,
    batch,
    nc,
    kc,
    nr,
    kr,
    sr,
    extraBytes,
    outputMin,
    outputMax,
    threads,
    isa,
  );
  return output;
}

function checkLayout(
  layout: PackedGemmLayout,
): Required<{ [K in keyof PackedGemmLayout]: number }> {
  if (layout === undefined) fail('ERR_INVALID_ARG_TYPE', 'an object', 'layout', layout);
  const fields = expectObject(layout, 'layout');
  const nc = expectInteger(fields['nc'], 'layout.nc', 1, MAX_DIMENSION);
  const kc = expectInteger(fields['kc'], 'layout.kc', 1, MAX_DIMENSION);
  const nr = expectInteger(fields['nr'], 'layout.nr', 1, MAX_TILE);
  const kr = expectInteger(fields['kr'], 'layout.kr', 1, MAX_TILE);
  const sr = expectInteger(fields['sr'], 'layout.sr', 1, MAX_TILE);
  const extraBytes =
    fields['extraBytes'] === undefined
      ? 0
      : expectInteger(fields['extraBytes'], 'layout.extraBytes', 0, MAX_DIMENSION);
  const skr = sr * kr;
  if ((skr & (skr - 1)) !== 0) {
    fail('ERR_INVALID_ARG_VALUE', 'sr·kr to be a power of two', 'layout.sr·kr', skr);
  }
  if (extraBytes % 4 !== 0) {
    fail('ERR_INVALID_ARG_VALUE', 'a multiple of 4', 'layout.extraBytes', extraBytes);
  }
  return { nc, kc, nr, kr, sr, extraBytes };
}

function packedByteLength(packed: unknown): number {
  if (packed instanceof Uint8Array) {
    if (packed.byteOffset % 4 !== 0) {
      fail(
        'ERR_INVALID_ARG_VALUE',
        'a view that starts at a multiple of 4 bytes',
        'packed',
        packed,
      );
    }
    return packed.byteLength;
  }
  if (packed instanceof ArrayBuffer) return packed.byteLength;
  return fail('ERR_INVALID_ARG_TYPE', 'a Uint8Array or an ArrayBuffer', 'packed', packed);
}
