// Straightforward re-statements used as oracles: element by element, no shortcuts.

/** xnn_pack_f32_gemm_goi_w transcribed loop for loop from XNNPACK's C, on a Float32Array. */
export function referencePackGoi(
  g: number,
  nc: number,
  kc: number,
  nr: number,
  kr: number,
  sr: number,
  k: Float32Array,
  b: Float32Array | null,
  extraFloats: number,
): Float32Array {
  const skr = sr * kr;
  const kPadded = Math.ceil(kc / skr) * skr;
  const total = g * Math.ceil(nc / nr) * (nr * (1 + kPadded) + extraFloats);
  const out = new Float32Array(total);
  let p = 0;
  for (let group = 0; group < g; group++) {
    for (let start = 0; start < nc; start += nr) {
      const size = Math.min(nc - start, nr);
      if (b !== null) {
        for (let i = 0; i < size; i++) out[p + i] = b[group * nc + start + i] as number;
      }
      p += nr;
      for (let kb = 0; kb < kPadded; kb += kr) {
        for (let i = 0; i < size; i++) {
          for (let j = 0; j < kr; j++) {
            const kcIdx = Math.floor(kb / skr) * skr + ((kb + j + i * kr) & (skr - 1));
            if (kcIdx < kc) out[p + j] = k[group * nc * kc + (start + i) * kc + kcIdx] as number;
          }
          p += kr;
        }
        p += (nr - size) * kr;
      }
      p += extraFloats;
    }
  }
  return out;
}

/** y = x·Wᵀ + b in float64. */
export function referenceMatmul(
  x: Float32Array,
  batch: number,
  w: Float32Array,
  bias: Float32Array | null,
  nc: number,
  kc: number,
): Float64Array {
  const y = new Float64Array(batch * nc);
  for (let r = 0; r < batch; r++) {
    for (let n = 0; n < nc; n++) {
      let acc = bias === null ? 0 : (bias[n] as number);
      for (let i = 0; i < kc; i++) acc += (x[r * kc + i] as number) * (w[n * kc + i] as number);
      y[r * nc + n] = acc;
    }
  }
  return y;
}

/** Deterministic pseudo-random floats in [-1, 1). */
export function randomFloats(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = ((s >>> 0) / 0x1_0000_0000) * 2 - 1;
  }
  return out;
}
