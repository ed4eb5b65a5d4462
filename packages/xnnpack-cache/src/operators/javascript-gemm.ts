import type { GemmGoiLayout } from '../packing/gemm-goi.js';

/** Rows computed together by one pass over the packed weights. */
const ROWS_PER_PASS = 4;

/**
 * The JavaScript kernel over XNNPACK's packed GEMM layout: where the native addon is
 * missing, and the reference the native kernels are tested against. Sums in float64, so
 * its outputs are the exact sums rounded once (before the caller's clamping).
 */
export class JavascriptGemm {
  readonly #layout: GemmGoiLayout;
  /**
   * Input rows, each padded with zeros to K', so padded weight slots multiply zeros.
   * Created at the first run: a model's operators are created long before they all run.
   */
  #rows: Float32Array | null = null;

  constructor(layout: GemmGoiLayout) {
    this.#layout = layout;
  }

  /** y[batchSize][nc] = x·Wᵀ + b from the packed floats `w` (not clamped). */
  run(w: Float32Array, input: Float32Array, batchSize: number, y: Float32Array): void {
    const { kc, nc } = this.#layout;
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
