import type { FlatbufferBuilder } from './flatbuffers-runtime.js';

// Vectors are written back to front, as flatbuffers builds; each helper returns the
// vector's offset, to be added to a table before the table is started.

type Offset = number;

/** A vector of 32-bit integers ([uint] or [int]: the same bits once checked). */
export function uint32Vector(builder: FlatbufferBuilder, values: readonly number[]): Offset {
  builder.startVector(4, values.length, 4);
  for (let i = values.length - 1; i >= 0; i--) builder.addInt32((values[i] as number) | 0);
  return builder.endVector();
}

export function int64Vector(builder: FlatbufferBuilder, values: readonly bigint[]): Offset {
  builder.startVector(8, values.length, 8);
  for (let i = values.length - 1; i >= 0; i--) builder.addInt64(values[i] as bigint);
  return builder.endVector();
}

export function offsetVector(builder: FlatbufferBuilder, offsets: readonly Offset[]): Offset {
  builder.startVector(4, offsets.length, 4);
  for (let i = offsets.length - 1; i >= 0; i--) builder.addOffset(offsets[i] as Offset);
  return builder.endVector();
}

/** A [ubyte] vector whose first byte sits at a multiple of `alignment` (force_align). */
export function byteVector(builder: FlatbufferBuilder, bytes: Uint8Array, alignment = 1): Offset {
  // Aligning the end of the bytes (the buffer grows downwards) aligns their start.
  builder.prep(alignment, bytes.length);
  return builder.createByteVector(bytes);
}

/**
 * A vector of NamedData tables {key, segment_index}: schema/program.fbs declares two fields,
 * extension/flat_tensor/serialize/flat_tensor.fbs three (tensor_layout, left null here).
 */
export function namedDataVector(
  builder: FlatbufferBuilder,
  entries: readonly { key: string; segmentIndex: number }[],
  fields: 2 | 3,
): Offset {
  return offsetVector(
    builder,
    entries.map((entry) => {
      const key = builder.createString(entry.key);
      builder.startObject(fields);
      builder.addFieldOffset(0, key, 0);
      builder.addFieldInt32(1, entry.segmentIndex, 0);
      return builder.endObject();
    }),
  );
}

/**
 * A vector of DataSegment tables {offset, size} (uint64): the same table in
 * schema/program.fbs and extension/flat_tensor/serialize/flat_tensor.fbs.
 */
export function dataSegmentVector(
  builder: FlatbufferBuilder,
  segments: readonly { offset: number | bigint; size: number | bigint }[],
): Offset {
  return offsetVector(
    builder,
    segments.map((segment) => {
      builder.startObject(2);
      builder.addFieldInt64(0, BigInt(segment.offset), 0n);
      builder.addFieldInt64(1, BigInt(segment.size), 0n);
      return builder.endObject();
    }),
  );
}
