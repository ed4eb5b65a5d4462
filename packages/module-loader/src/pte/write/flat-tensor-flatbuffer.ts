import { dataSegmentVector, namedDataVector } from './flatbuffer-vectors.js';
import { newFlatbufferBuilder } from './flatbuffers-runtime.js';

// Slot numbers are the field indices of extension/flat_tensor/serialize/flat_tensor.fbs.

/** flat_tensor.fbs: file_identifier "FT01". */
export const FLAT_TENSOR_FILE_IDENTIFIER = 'FT01';
/** extension/flat_tensor/serialize/serialize.py: _FLAT_TENSOR_VERSION. */
const FLAT_TENSOR_VERSION = 0;

export interface FlatTensorTables {
  segments: readonly { offset: number; size: number }[];
  /** tensor_layout is not written (null: raw bytes, as XNNPACK constants are). */
  namedData: readonly { key: string; segmentIndex: number }[];
}

/** The FlatTensor flatbuffer (identifier FT01), without the FH01 header. */
export function encodeFlatTensorFlatbuffer(tables: FlatTensorTables): Uint8Array {
  const builder = newFlatbufferBuilder();
  // flat_tensor.fbs: FlatTensor fields version, segments, named_data.
  const segments = dataSegmentVector(builder, tables.segments);
  const namedData = namedDataVector(builder, tables.namedData, 3);
  builder.startObject(3);
  builder.addFieldInt32(0, FLAT_TENSOR_VERSION, 0);
  builder.addFieldOffset(1, segments, 0);
  builder.addFieldOffset(2, namedData, 0);
  builder.finish(builder.endObject(), FLAT_TENSOR_FILE_IDENTIFIER);
  return builder.asUint8Array();
}
