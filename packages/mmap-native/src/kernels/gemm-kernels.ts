// The addon's f32 GEMM kernels over weights packed in XNNPACK's GEMM layout, read in place
// (src/native/kernels/). Arguments are checked here first, for messages in this package's
// style; the addon checks them again, so no call can make it read or write out of bounds.
import { tryLoadAddon } from '../backends/posix/addon.js';
import {
  type CheckedSettings,
  checkInput,
  checkLayout,
  checkPacked,
  checkSettings,
  outputFor,
} from './gemm-checks.js';
import type { GemmIsa } from './gemm-isa.js';
import {
  type NativeGemmPlan,
  type NativeGemmRun,
  PreparedGemm,
  type PreparedGemmF32,
} from './prepared-gemm.js';
import {
  type GemmChainLayer,
  type NativeGemmChainFunctions,
  type PreparedGemmChainF32,
  prepareGemmChain,
} from './prepared-gemm-chain.js';

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

/** What a GEMM is run with besides its buffers: the same for every run of a layer. */
export interface GemmF32Settings {
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

export interface GemmF32Options extends GemmF32Settings {
  /** Where the [batch][nc] result goes (at least batch·nc floats; default: a new array). */
  readonly output?: Float32Array | undefined;
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
  /**
   * gemmF32 for one layout and settings, checked once: each `run` then checks only its
   * buffers and batch (for a layer run many times, as a model's are).
   */
  prepareGemmF32(layout: PackedGemmLayout, settings?: GemmF32Settings): PreparedGemmF32;
  /**
   * Layers of prepareGemmF32 run one after another in one call, each one's output the
   * next one's input (layer i + 1's kc must be layer i's nc): the same bits as running
   * each layer's `run` in turn, without a call per layer.
   */
  prepareGemmChainF32(layers: readonly GemmChainLayer[]): PreparedGemmChainF32;
}

/** The functions src/native/kernels/gemm-binding.cc adds to the addon. */
interface KernelsAddon extends NativeGemmChainFunctions {
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
  gemmF32Plan(
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
  ): NativeGemmPlan;
  gemmF32Run: NativeGemmRun;
  gemmIsas(): GemmIsa[];
}

/**
 * The GEMM kernels, or null when there is no addon (a machine without the prebuilt addon
 * or a compiler, where the heap backend is used) or the addon predates them. An addon
 * that exists but does not load is thrown, as by the posix backend.
 */
export function loadGemmKernels(): GemmKernels | null {
  const addon = tryLoadAddon() as unknown as Partial<KernelsAddon> | null;
  if (
    addon === null ||
    typeof addon.gemmF32 !== 'function' ||
    typeof addon.gemmF32Plan !== 'function' ||
    typeof addon.gemmF32Run !== 'function' ||
    typeof addon.gemmF32Chain !== 'function' ||
    typeof addon.gemmF32ChainRun !== 'function' ||
    addon.gemmIsas === undefined
  ) {
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
    prepareGemmF32: (layout: PackedGemmLayout, settings?: GemmF32Settings) =>
      prepareGemmF32(native, isas, layout, settings),
    prepareGemmChainF32: (layers: readonly GemmChainLayer[]) => prepareGemmChain(native, layers),
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
  const { nc, kc, nr, kr, sr, extraBytes, packedBytes } = checkLayout(layout);
  checkPacked(packed, packedBytes);
  checkInput(input, batch, kc);
  const settings = checkSettings(options, 'options', isas);
  const output = outputFor(options?.output, batch, nc, 'options.output');
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
    settings.outputMin,
    settings.outputMax,
    settings.threads,
    settings.isa,
  );
  return output;
}

function prepareGemmF32(
  native: KernelsAddon,
  isas: readonly GemmIsa[],
  layout: PackedGemmLayout,
  options: GemmF32Settings | undefined,
): PreparedGemmF32 {
  const checked = checkLayout(layout);
  const { nc, kc, nr, kr, sr, extraBytes } = checked;
  const settings: CheckedSettings = checkSettings(options, 'settings', isas);
  const plan = native.gemmF32Plan(
    nc,
    kc,
    nr,
    kr,
    sr,
    extraBytes,
    settings.outputMin,
    settings.outputMax,
    settings.threads,
    settings.isa,
  );
  return new PreparedGemm(checked, native.gemmF32Run, plan);
}
