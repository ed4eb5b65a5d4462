/** A copy of f32 values as little-endian bytes (the byte order every ExecuTorch file uses). */
export function f32LittleEndianBytes(values: Float32Array): Uint8Array {
  if (process.getBuiltinModule('node:os').endianness() === 'LE') {
    return new Uint8Array(values.buffer, values.byteOffset, values.byteLength).slice();
  }
  const out = new Uint8Array(values.byteLength);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(4 * i, values[i] as number, true);
  return out;
}
