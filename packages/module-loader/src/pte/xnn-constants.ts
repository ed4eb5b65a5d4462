// A delegate's XNNGraph.constant_data entries, read when one is asked for (a program names
// thousands; a caller asks for a few, and a malformed entry is reported when it is).
import type { FlatBuffer, Malformed, Table } from './flatbuffer.js';

/** schema.fbs XNNGraph.constant_data: its field slot. ConstantDataOffset: offset, size, named_key. */
const GRAPH_CONSTANT_DATA = 8;
const CONSTANT = { offset: 0, size: 1, namedKey: 2 };

export interface ConstantEntries {
  readonly count: number;
  /** constant_data[index].named_key, or null when the constant is stored by offset. */
  key(index: number): string | null;
  /** The bytes of constant_data[index] in the payload's constant data. */
  bytes(index: number): Uint8Array;
}

/** The entries of `graph` (the XNNGraph root of `fb`); `constants` is the payload's constant data. */
export function constantEntries(
  fb: FlatBuffer,
  graph: Table,
  constants: Uint8Array,
  malformed: Malformed,
): ConstantEntries {
  const list = fb.fieldVector(graph, GRAPH_CONSTANT_DATA, 4, 'XNNGraph.constant_data');
  const entry = (index: number): Table => {
    if (!(index >= 0 && index < list.length)) malformed(`constant ${index} of ${list.length}`);
    return fb.tableAt(list, index, 'ConstantDataOffset');
  };
  return {
    count: list.length,
    key: (index) => fb.fieldString(entry(index), CONSTANT.namedKey, 'ConstantDataOffset.named_key'),
    bytes: (index) => {
      const table = entry(index);
      // XNNCompiler.cpp getConstantDataPtr: payload[constant_data_offset + offset, + size).
      const offset = fb.fieldU64(table, CONSTANT.offset, 'ConstantDataOffset.offset');
      const size = fb.fieldU64(table, CONSTANT.size, 'ConstantDataOffset.size');
      if (!(offset + size <= constants.byteLength)) {
        malformed(
          `constant ${index}: bytes ${offset}..${offset + size} of ${constants.byteLength} of constant data`,
        );
      }
      return constants.subarray(offset, offset + size);
    },
  };
}
