/** Widens IEEE half-precision values (little-endian u16) to f32. */
export function f16ToF32(bytes: Uint8Array): Float32Array {
  const count = bytes.byteLength >>> 1;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const h = (bytes[2 * i] as number) | ((bytes[2 * i + 1] as number) << 8);
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) out[i] = sign * 2 ** -14 * (fraction / 1024);
    else if (exponent === 31)
      out[i] = fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    else out[i] = sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return out;
}

/** Widens bfloat16 values (the top half of an f32) to f32. */
export function bf16ToF32(bytes: Uint8Array): Float32Array {
  const count = bytes.byteLength >>> 1;
  const bits = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    bits[i] = (((bytes[2 * i] as number) | ((bytes[2 * i + 1] as number) << 8)) << 16) >>> 0;
  }
  return new Float32Array(bits.buffer);
}
