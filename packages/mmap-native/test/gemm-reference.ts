// Oracles for the GEMM kernels' tests: XNNPACK's packing loop (xnn_pack_f32_gemm_goi_w,
// one group) and y = x·Wᵀ + b in float64 with clampOutputs' rules, element by element; and
// the kernels under test.
import { type GemmKernels, loadGemmKernels } from '../src/index.js';

export interface Shape {
  nc: number;
  kc: number;
  nr: number;
  kr: number;
  sr: number;
  extraBytes: number;
}

/** Deterministic floats in [-1, 1) from a 32-bit LCG. */
export function floats(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 0x1_0000_0000) * 2 - 1;
  }
  return out;
}

export function packedBytes({ nc, kc, nr, kr, sr, extraBytes }: Shape): number {
  const paddedKc = Math.ceil(kc / (sr * kr)) * sr * kr;
  return Math.ceil(nc / nr) * (nr * (1 + paddedKc) * 4 + extraBytes);
}

/** Packs kernel [nc][kc] and bias [nc]; padding rows and extra bytes hold `filler`. */
export function pack(
  shape: Shape,
  kernel: Float32Array,
  bias: Float32Array,
  filler = 0,
): Uint8Array {
  const { nc, kc, nr, kr, sr, extraBytes } = shape;
  const skr = sr * kr;
  const paddedKc = Math.ceil(kc / skr) * skr;
  const out = new Float32Array(packedBytes(shape) / 4).fill(filler);
  let p = 0;
  for (let start = 0; start < nc; start += nr) {
    const size = Math.min(nc - start, nr);
    for (let i = 0; i < size; i++) out[p + i] = bias[start + i] as number;
    p += nr;
    for (let kb = 0; kb < paddedKc; kb += kr) {
      for (let i = 0; i < size; i++) {
        for (let j = 0; j < kr; j++) {
          const k = Math.floor(kb / skr) * skr + ((kb + j + i * kr) & (skr - 1));
          // Padded columns hold zeros, as XNNPACK's zero-filled buffer does.
          out[p + j] = k < kc ? (kernel[(start + i) * kc + k] as number) : 0;
        }
        p += kr;
      }
      p += (nr - size) * kr;
    }
    p += extraBytes / 4;
  }
  return new Uint8Array(out.buffer);
}

/** x·Wᵀ + b in float64, rounded to float32, clamped when a bound is finite. */
export function reference(
  shape: Shape,
  kernel: Float32Array,
  bias: Float32Array,
  input: Float32Array,
  batch: number,
  min = Number.NEGATIVE_INFINITY,
  max = Number.POSITIVE_INFINITY,
): Float32Array {
  const { nc, kc } = shape;
  const out = new Float32Array(batch * nc);
  const clamp = min !== Number.NEGATIVE_INFINITY || max !== Number.POSITIVE_INFINITY;
  for (let r = 0; r < batch; r++) {
    for (let o = 0; o < nc; o++) {
      let acc = bias[o] as number;
      for (let k = 0; k < kc; k++)
        acc += (kernel[o * kc + k] as number) * (input[r * kc + k] as number);
      let v = Math.fround(acc);
      if (clamp) {
        if (!(v >= min)) v = min;
        else if (v > max) v = max;
      }
      out[r * nc + o] = v;
    }
  }
  return out;
}

/** Index of the first element outside |a - b| <= tol·(1 + |b|) (NaN only matches NaN), or -1. */
export function firstMismatch(actual: Float32Array, expected: Float32Array, tol = 1e-5): number {
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i] as number;
    const b = expected[i] as number;
    if (Number.isNaN(b) ? !Number.isNaN(a) : !(Math.abs(a - b) <= tol * (1 + Math.abs(b))))
      return i;
  }
  return -1;
}

/** The addon's GEMM kernels. Linux builds the addon here: their absence is a failure, not a skip. */
export function kernels(): GemmKernels {
  const loaded = loadGemmKernels();
  if (loaded === null) throw new Error('the addon has no GEMM kernels: build it first');
  return loaded;
}
