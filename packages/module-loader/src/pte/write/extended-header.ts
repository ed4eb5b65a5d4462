// exir/_serialize/_program.py: _ExtendedHeader.to_bytes (schema/extended_header.h reads it).

/** _program.py: _ExtendedHeader.EXPECTED_MAGIC. */
export const EXTENDED_HEADER_MAGIC = 'eh00';
/** _program.py: EXPECTED_LENGTH = 4 + 4 + 8 + 8 + 8. */
export const EXTENDED_HEADER_LENGTH = 32;
/** _program.py: the header is padded to the schema's largest force_align (16 in schema/program.fbs). */
export const PROGRAM_MAX_ALIGNMENT = 16;

export interface ExtendedHeaderFields {
  programSize: number;
  segmentBaseOffset: number;
  segmentDataSize: number;
}

/** "eh00", u32 length 32, u64 program_size, u64 segment_base_offset, u64 segment_data_size. */
export function encodeExtendedHeader(fields: ExtendedHeaderFields): Uint8Array {
  const out = new Uint8Array(EXTENDED_HEADER_LENGTH);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(EXTENDED_HEADER_MAGIC), 0);
  view.setUint32(4, EXTENDED_HEADER_LENGTH, true);
  view.setBigUint64(8, BigInt(fields.programSize), true);
  view.setBigUint64(16, BigInt(fields.segmentBaseOffset), true);
  view.setBigUint64(24, BigInt(fields.segmentDataSize), true);
  return out;
}
