// The .ptd external data file (ExecuTorch's FlatTensor): a flatbuffer (identifier FT01)
// whose FH01 header at byte 8 says where the flatbuffer ends and the segments start.
import { FlatBuffer, type Malformed } from './flatbuffer.js';
import type { ByteRanges } from './mapped-bytes.js';
import { programInvalid } from './pte-errors.js';
import type { FileRange } from './pte-file.js';

/** extension/flat_tensor/serialize/flat_tensor.fbs: file_identifier. */
export const PTD_IDENTIFIER = 'FT01';
/** extension/flat_tensor/serialize/flat_tensor_header.h: magic and smallest length. */
const HEADER_MAGIC = 'FH01';
const HEADER_MIN_LENGTH = 40;
const HEADER_AT = 8;

/** The header and its padding (extension/flat_tensor/serialize/serialize.py pads to 48). */
const HEAD_BYTES = 48;

/**
 * The named data of a .ptd file: key → where its bytes lie (only the header and the
 * flatbuffer are read). Segment offsets count from the header's segment_base_offset
 * (extension/flat_tensor/flat_tensor_data_map.cpp).
 */
export function readPtdNamedData(path: string, file: ByteRanges): Map<string, FileRange> {
  const malformed: Malformed = (what) => programInvalid(path, what);
  const bytes = file.read(0, HEAD_BYTES);
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
  const size = file.size;
  if (!(flatbufferEnd >= 8 && flatbufferEnd <= size)) {
    malformed(`FH01 flatbuffer (bytes 0..${flatbufferEnd}) ends past the file of ${size} bytes`);
  }
  if (!(segmentBase >= flatbufferEnd && segmentBase + segmentDataSize <= size)) {
    malformed(
      `FH01 segments (bytes ${segmentBase}..${segmentBase + segmentDataSize}) lie outside the file of ${size} bytes`,
    );
  }
  // The runtime parses bytes [0, flatbuffer_offset + flatbuffer_size) as the flatbuffer.
  const fb = new FlatBuffer(file.range(0, flatbufferEnd), malformed);
  const root = fb.root('FlatTensor');
  const segments = fb.fieldVector(root, 1, 4, 'FlatTensor.segments');
  const entries = fb.fieldVector(root, 2, 4, 'FlatTensor.named_data');
  const data = new Map<string, FileRange>();
  for (let i = 0; i < entries.length; i++) {
    const entry = fb.tableAt(entries, i, 'NamedData');
    const key = fb.fieldString(entry, 0, 'NamedData.key') ?? '';
    const index = fb.fieldU32(entry, 1);
    if (index >= segments.length)
      malformed(`named_data[${i}]: segment ${index} of ${segments.length}`);
    const segment = fb.tableAt(segments, index, 'DataSegment');
    const start = segmentBase + fb.fieldU64(segment, 0, 'DataSegment.offset');
    const length = fb.fieldU64(segment, 1, 'DataSegment.size');
    if (!(start + length <= size)) {
      malformed(
        `named_data[${i}]: bytes ${start}..${start + length} lie outside the file of ${size} bytes`,
      );
    }
    data.set(key, { start, size: length });
  }
  return data;
}
