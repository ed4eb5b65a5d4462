// A GEMM whose layout and options were checked once (prepareGemmF32): each run checks only
// the buffers and the batch, here and in the addon, which holds the checked layout itself
// (a plan it made and still holds: src/native/kernels/gemm-plan-handle.cc).
import { type CheckedLayout, checkInput, checkPacked, outputFor } from './gemm-checks.js';

/** The addon's handle of a plan: opaque here. */
export type NativeGemmPlan = object;

/** The addon's run of a plan (src/native/kernels/gemm-binding.cc gemmF32Run). */
export type NativeGemmRun = (
  plan: NativeGemmPlan,
  packed: Uint8Array | ArrayBuffer,
  input: Float32Array,
  output: Float32Array,
  batch: number,
) => void;

/** One layer's GEMM: its layout and options fixed, its weights, input and batch per run. */
export interface PreparedGemmF32 {
  /** The layout it runs (extraBytes filled in). */
  readonly layout: Readonly<Omit<CheckedLayout, 'packedBytes'>>;
  /** Bytes `packed` must hold at least: the layout's blocks. */
  readonly packedBytes: number;
  /**
   * As `gemmF32(packed, layout, input, batch, { ...options, output })` with the layout and
   * options it was prepared with. Returns the output.
   */
  run(
    packed: Uint8Array | ArrayBuffer,
    input: Float32Array,
    batch: number,
    output?: Float32Array,
  ): Float32Array;
}

export class PreparedGemm implements PreparedGemmF32 {
  readonly layout: Readonly<Omit<CheckedLayout, 'packedBytes'>>;
  readonly packedBytes: number;
  readonly #run: NativeGemmRun;
  readonly #plan: NativeGemmPlan;

  constructor(layout: CheckedLayout, run: NativeGemmRun, plan: NativeGemmPlan) {
    const { nc, kc, nr, kr, sr, extraBytes, packedBytes } = layout;
    this.layout = Object.freeze({ nc, kc, nr, kr, sr, extraBytes });
    this.packedBytes = packedBytes;
    this.#run = run;
    this.#plan = plan;
  }

  /** The addon's plan of `gemm`, or undefined when prepareGemmF32 did not make it. */
  static planOf(gemm: unknown): NativeGemmPlan | undefined {
    return typeof gemm === 'object' && gemm !== null && #plan in gemm ? gemm.#plan : undefined;
  }

  run(
    packed: Uint8Array | ArrayBuffer,
    input: Float32Array,
    batch: number,
    output?: Float32Array,
  ): Float32Array {
    checkPacked(packed, this.packedBytes);
    checkInput(input, batch, this.layout.kc);
    const y = outputFor(output, batch, this.layout.nc, 'output');
    this.#run(this.#plan, packed, input, y, batch);
    return y;
  }
}
