// The .ptd external data file (ExecuTorch's FlatTensor): a flatbuffer (identifier FT01)
// whose FH01 header at byte 8 says where the flatbuffer ends and the segments start.
import { FlatBuffer, type Malformed } from './flatbuffer.js';
import { programInvalid } from './pte-errors.js';

/** extension/flat_tensor/serialize/flat_tensor.fbs: file_identifier. */
export const PTD_IDENTIFIER = 'FT01';
/** extension/flat_tensor/serialize/flat_tensor_header.h: magic and smallest length. */
const HEADER_MAGIC = 'FH01';
const HEADER_MIN_LENGTH = 40;
const HEADER_AT = 8;

/**
 * The named data of a .ptd file: key → bytes (views of the file). Segment offsets count
 * from the header's segment_base_offset (extension/flat_tensor/flat_tensor_data_map.cpp).
 */
export function readPtdNamedData(path: string, bytes: Uint8Array): Map<string, Uint8Array> {
  const malformed: Malformed = (what) => programInvalid(path, what);
  const whole = new FlatBuffer(bytes, malformed);
  if (bytes.byteLength < HEADER_AT + 8 || whole.identifier() !== PTD_IDENTIFIER) {
    malformed(`expected the identifier ${PTD_IDENTIFIER} at bytes 4..8 of a .ptd file`);
  }
  const magic = String.fromCharCode(...bytes.subarray(HEADER_AT, HEADER_AT + 4));
  if (magic !== HEADER_MAGIC) malformed(`expected the ${HEADER_MAGIC} header at byte ${HEADER_AT}`);
  const length = whole.u32(HEADER_AT + 4);
  if (length < HEADER_MIN_LENGTH) malformed(`FH01 header length ${length}`);
  const flatbufferOffset = whole.u64(HEADER_AT + 8, 'FH01 flatbuffer_offset');
  const flatbufferSize = whole.u64(HEADER_AT + 16, 'FH01 flatbuffer_size');
  const segmentBase = whole.u64(HEADER_AT + 24, 'FH01 segment_base_offset');
  const segmentDataSize = whole.u64(HEADER_AT + 32, 'FH01 segment_data_size');
  const flatbufferEnd = flatbufferOffset + flatbufferSize;
  if (!(flatbufferEnd <= bytes.byteLength)) {
    malformed(
      `FH01 flatbuffer (bytes 0..${flatbufferEnd}) ends past the file of ${bytes.byteLength} bytes`,
    );
  }
  if (!(segmentBase >= flatbufferEnd && segmentBase + segmentDataSize <= bytes.byteLength)) {
    malformed(
      `FH01 segments (bytes ${segmentBase}..${segmentBase + segmentDataSize}) lie outside the file of ${bytes.byteLength} bytes`,
    );
  }
  // The runtime parses bytes [0, flatbuffer_offset + flatbuffer_size) as the flatbuffer.
  const fb = new FlatBuffer(bytes.subarray(0, flatbufferEnd), malformed);
  const root = fb.root('FlatTensor');
  const segments = fb.fieldVector(root, 1, 4, 'FlatTensor.segments');
  const entries = fb.fieldVector(root, 2, 4, 'FlatTensor.named_data');
  const data = new Map<string, Uint8Array>();
  for (let i = 0; i < entries.length; i++) {
    const entry = fb.tableAt(entries, i, 'NamedData');
    const key = fb.fieldString(entry, 0, 'NamedData.key') ?? '';
    const index = fb.fieldU32(entry, 1);
    if (index >= segments.length)
      malformed(`named_data[${i}]: segment ${index} of ${segments.length}`);
    const segment = fb.tableAt(segments, index, 'DataSegment');
    const start = segmentBase + fb.fieldU64(segment, 0, 'DataSegment.offset');
    const size = fb.fieldU64(segment, 1, 'DataSegment.size');
    if (!(start + size <= bytes.byteLength)) {
      malformed(
        `named_data[${i}]: bytes ${start}..${start + size} lie outside the file of ${bytes.byteLength} bytes`,
      );
    }
    data.set(key, bytes.subarray(start, start + size));
  }
  return data;
}
