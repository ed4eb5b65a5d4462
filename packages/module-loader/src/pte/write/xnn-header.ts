// backends/xnnpack/serialization/xnnpack_graph_serialize.py: XNNHeader.to_bytes.

/** xnnpack_graph_serialize.py: EXPECTED_MAGIC, written at [4, 8) like a flatbuffer identifier. */
export const XNN_HEADER_MAGIC = 'XH00';
/** xnnpack_graph_serialize.py: EXPECTED_LENGTH = 4 + 4 + 2 + 4 + 4 + 4 + 8. */
export const XNN_HEADER_LENGTH = 30;

export interface XnnHeaderFields {
  flatbufferOffset: number;
  flatbufferSize: number;
  constantDataOffset: number;
  constantDataSize: number;
}

/** The 30 header bytes: zeros, "XH00", u16 length, u32 fb offset/size, u32 + u64 constants. */
export function encodeXnnHeader(fields: XnnHeaderFields): Uint8Array {
  const out = new Uint8Array(XNN_HEADER_LENGTH);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(XNN_HEADER_MAGIC), 4);
  view.setUint16(8, XNN_HEADER_LENGTH, true);
  view.setUint32(10, fields.flatbufferOffset, true);
  view.setUint32(14, fields.flatbufferSize, true);
  view.setUint32(18, fields.constantDataOffset, true);
  view.setBigUint64(22, BigInt(fields.constantDataSize), true);
  return out;
}
