import type { FilePieces } from './file-pieces.js';
import { padTo } from './padding.js';
import type { SegmentLayout } from './segments.js';

/**
 * Inserts `header` right after a flatbuffer's root offset and identifier (bytes [0, 8)) and
 * moves the root offset past it (exir/_serialize/_program.py: _insert_flatbuffer_header).
 * Offsets inside a flatbuffer are relative, so only the root offset changes; a header
 * padded to a multiple of the schema's largest alignment keeps every field aligned.
 */
export function insertFlatbufferHeader(
  flatbuffer: Uint8Array,
  header: Uint8Array,
  paddedLength: number,
): Uint8Array {
  const out = new Uint8Array(flatbuffer.length + paddedLength);
  const view = new DataView(out.buffer);
  view.setUint32(
    0,
    new DataView(flatbuffer.buffer, flatbuffer.byteOffset).getUint32(0, true) + paddedLength,
    true,
  );
  out.set(flatbuffer.subarray(4, 8), 4);
  out.set(padTo(header, paddedLength), 8);
  out.set(flatbuffer.subarray(8), 8 + paddedLength);
  return out;
}

/**
 * A whole file: the flatbuffer with `header` inserted, then each segment at
 * `segmentBaseOffset` + its offset in `layout` (the space between is zero padding).
 */
export function fileWithSegments(
  flatbuffer: Uint8Array,
  header: Uint8Array,
  paddedLength: number,
  segmentBaseOffset: number,
  segments: readonly { readonly bytes: Uint8Array }[],
  layout: SegmentLayout,
): FilePieces {
  const pieces = [{ bytes: insertFlatbufferHeader(flatbuffer, header, paddedLength), position: 0 }];
  for (const [index, segment] of segments.entries()) {
    const offset = (layout.segments[index] as { offset: number }).offset;
    pieces.push({ bytes: segment.bytes, position: segmentBaseOffset + offset });
  }
  return { length: segmentBaseOffset + layout.size, pieces };
}
