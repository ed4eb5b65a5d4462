import { invalidArgument } from '../../errors.js';
import { sha256Hex } from '../../safetensors/digest.js';
import {
  EXTENDED_HEADER_LENGTH,
  encodeExtendedHeader,
  PROGRAM_MAX_ALIGNMENT,
} from './extended-header.js';
import { assembleFile, type FilePieces } from './file-pieces.js';
import { fileWithSegments } from './inserted-header.js';
import { collectNamedData } from './named-data-buffers.js';
import { alignUp } from './padding.js';
import {
  DATA_LOCATION,
  type DelegateReference,
  encodeProgramFlatbuffer,
} from './program-flatbuffer.js';
import type { PteDescription } from './pte-description.js';
import { layoutSegments, SEGMENT_ALIGNMENT, type SegmentInput } from './segments.js';

/**
 * A `.pte` file as exir/_serialize/_program.py serialize_pte_binary writes it with its
 * default config: segment 0 is the (empty) constant segment, then each distinct delegate
 * blob, then each distinct named-data buffer; the Program flatbuffer gets the eh00 header
 * at offset 8 when the segments hold any bytes, and the segments start at
 * align_up(program_size, 128).
 */
export function encodePte(program: PteDescription): Uint8Array {
  return assembleFile(pteFile(program));
}

/** encodePte's file as the pieces written into it (its segments are not copied). */
export function pteFile(program: PteDescription): FilePieces {
  // _program.py _extract_constant_segment: the emitter's one placeholder buffer gives an
  // empty segment and offsets [0].
  const segments: SegmentInput[] = [{ bytes: new Uint8Array(0), alignment: 1 }];
  const constantSegment = { segmentIndex: 0, offsets: [0n] };
  // _program.py _extract_delegate_segments: equal blobs share one segment.
  const segmentOfBlob = new Map<string, number>();
  const inlineDelegateData: Uint8Array[] = [];
  const delegateReferences = program.plans.map((plan) =>
    (plan.delegates ?? []).map((delegate): DelegateReference => {
      if (delegate.location === 'inline') {
        inlineDelegateData.push(delegate.payload);
        return { location: DATA_LOCATION.inline, index: inlineDelegateData.length - 1 };
      }
      const digest = `${delegate.payload.length}:${sha256Hex(delegate.payload)}`;
      let index = segmentOfBlob.get(digest);
      if (index === undefined) {
        index = segments.length;
        segmentOfBlob.set(digest, index);
        segments.push({ bytes: delegate.payload, alignment: 1 });
      }
      return { location: DATA_LOCATION.segment, index };
    }),
  );
  // _program.py _extract_named_data: one segment per unique buffer.
  const named = collectNamedData(program.namedData ?? []);
  const firstNamedSegment = segments.length;
  for (const buffer of named.buffers) segments.push(buffer);
  const layout = layoutSegments(segments);
  const flatbuffer = encodeProgramFlatbuffer({
    version: program.version ?? 0,
    plans: program.plans,
    delegateReferences,
    inlineDelegateData,
    segments: layout.segments,
    constantSegment,
    namedData:
      named.keys.length === 0
        ? null
        : named.keys.map(({ key, buffer }) => ({ key, segmentIndex: firstNamedSegment + buffer })),
  });
  // _program.py: "If there are no segments present, do not insert the extended header."
  if (layout.size === 0)
    return { length: flatbuffer.length, pieces: [{ bytes: flatbuffer, position: 0 }] };
  if (program.extendedHeader === false) {
    invalidArgument(
      'no segment bytes (delegates inline, no named data)',
      'a program without an extended header',
      `${layout.size} segment bytes`,
    );
  }
  const paddedHeaderLength = alignUp(EXTENDED_HEADER_LENGTH, PROGRAM_MAX_ALIGNMENT);
  const programSize = paddedHeaderLength + flatbuffer.length;
  const segmentBaseOffset = alignUp(programSize, SEGMENT_ALIGNMENT);
  const header = encodeExtendedHeader({
    programSize,
    segmentBaseOffset,
    segmentDataSize: layout.size,
  });
  return fileWithSegments(
    flatbuffer,
    header,
    paddedHeaderLength,
    segmentBaseOffset,
    segments,
    layout,
  );
}
