import { invalidArgument } from '../../errors.js';
import { alignUp, lcm } from './padding.js';

/** exir/_serialize/_program.py serialize_pte_binary and flat_tensor serialize.py: segment_alignment=128. */
export const SEGMENT_ALIGNMENT = 128;

export interface SegmentInput {
  bytes: Uint8Array;
  /** The data's own alignment (1 when it has none). */
  alignment: number;
}

export interface SegmentLayout {
  /** DataSegment offsets (relative to segment_base_offset) and sizes. */
  segments: { offset: number; size: number }[];
  /** The segments with their padding: segment_data_size. */
  size: number;
}

/**
 * Places segments one after another, each at a multiple of lcm(128, its alignment);
 * nothing pads the end (exir/_serialize/_program.py serialize_pte_binary; the same loop
 * is in extension/flat_tensor/serialize/serialize.py).
 */
export function layoutSegments(inputs: readonly SegmentInput[]): SegmentLayout {
  const segments: SegmentLayout['segments'] = [];
  let end = 0;
  for (const [index, input] of inputs.entries()) {
    const alignment = input.alignment;
    if (!Number.isInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0) {
      invalidArgument('a power of 2', `the alignment of segment ${index}`, alignment);
    }
    const offset = alignUp(end, lcm(SEGMENT_ALIGNMENT, alignment));
    segments.push({ offset, size: input.bytes.length });
    end = offset + input.bytes.length;
  }
  return { segments, size: end };
}
