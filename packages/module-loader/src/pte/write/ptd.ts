import { assembleFile, type FilePieces } from './file-pieces.js';
import { encodeFlatTensorFlatbuffer } from './flat-tensor-flatbuffer.js';
import {
  encodeFlatTensorHeader,
  FLAT_TENSOR_FLATBUFFER_ALIGNMENT,
  FLAT_TENSOR_HEADER_LENGTH,
} from './flat-tensor-header.js';
import { fileWithSegments } from './inserted-header.js';
import { collectNamedData } from './named-data-buffers.js';
import { alignUp } from './padding.js';
import type { NamedDataEntry } from './pte-description.js';
import { layoutSegments, SEGMENT_ALIGNMENT } from './segments.js';

/**
 * A `.ptd` file as extension/flat_tensor/serialize/serialize.py FlatTensorSerializer
 * writes it: the FlatTensor flatbuffer with the FH01 header at offset 8 (padded to 48),
 * zeros up to segment_base_offset = align_up(48 + flatbuffer size, 128), then one segment
 * per unique buffer (equal bytes under two keys are stored once).
 */
export function encodePtd(entries: readonly NamedDataEntry[]): Uint8Array {
  return assembleFile(ptdFile(entries));
}

/** encodePtd's file as the pieces written into it (its segments are not copied). */
export function ptdFile(entries: readonly NamedDataEntry[]): FilePieces {
  const named = collectNamedData(entries);
  const layout = layoutSegments(named.buffers);
  const flatbuffer = encodeFlatTensorFlatbuffer({
    segments: layout.segments,
    namedData: named.keys.map(({ key, buffer }) => ({ key, segmentIndex: buffer })),
  });
  const paddedHeaderLength = alignUp(FLAT_TENSOR_HEADER_LENGTH, FLAT_TENSOR_FLATBUFFER_ALIGNMENT);
  const segmentBaseOffset = alignUp(paddedHeaderLength + flatbuffer.length, SEGMENT_ALIGNMENT);
  const header = encodeFlatTensorHeader({
    flatbufferOffset: paddedHeaderLength,
    flatbufferSize: flatbuffer.length,
    segmentBaseOffset,
    segmentDataSize: layout.size,
  });
  return fileWithSegments(
    flatbuffer,
    header,
    paddedHeaderLength,
    segmentBaseOffset,
    named.buffers,
    layout,
  );
}
