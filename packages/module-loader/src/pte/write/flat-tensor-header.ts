// extension/flat_tensor/serialize/serialize.py: FlatTensorHeader.to_bytes
// (extension/flat_tensor/serialize/flat_tensor_header.h reads it).

/** serialize.py: FlatTensorHeader.EXPECTED_MAGIC. */
export const FLAT_TENSOR_HEADER_MAGIC = 'FH01';
/** serialize.py: EXPECTED_LENGTH = 4 + 4 + 8 + 8 + 8 + 8. */
export const FLAT_TENSOR_HEADER_LENGTH = 40;
/** serialize.py: _FLATBUFFER_ALIGNMENT, to which the header is padded. */
export const FLAT_TENSOR_FLATBUFFER_ALIGNMENT = 16;

export interface FlatTensorHeaderFields {
  flatbufferOffset: number;
  flatbufferSize: number;
  segmentBaseOffset: number;
  segmentDataSize: number;
}

/** "FH01", u32 length 40, u64 flatbuffer offset/size, u64 segment base offset/data size. */
export function encodeFlatTensorHeader(fields: FlatTensorHeaderFields): Uint8Array {
  const out = new Uint8Array(FLAT_TENSOR_HEADER_LENGTH);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(FLAT_TENSOR_HEADER_MAGIC), 0);
  view.setUint32(4, FLAT_TENSOR_HEADER_LENGTH, true);
  view.setBigUint64(8, BigInt(fields.flatbufferOffset), true);
  view.setBigUint64(16, BigInt(fields.flatbufferSize), true);
  view.setBigUint64(24, BigInt(fields.segmentBaseOffset), true);
  view.setBigUint64(32, BigInt(fields.segmentDataSize), true);
  return out;
}
