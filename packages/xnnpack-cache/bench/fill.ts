/** Deterministic floats in [-0.5, 0.5) from a 32-bit LCG: the same weights on every run. */
export function fill(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 0x1_0000_0000 - 0.5;
  }
  return out;
}
