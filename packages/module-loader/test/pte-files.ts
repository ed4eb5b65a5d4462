import { FlatTable } from './flatbuffer-table.js';

// Readers of written ExecuTorch files for tests, by the byte layout
// (exir/_serialize/_program.py, extension/flat_tensor/serialize/serialize.py).

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export interface PteFile {
  program: FlatTable;
  /** Bytes of Program.segments[index]. */
  segment(index: number): Uint8Array;
}

/** A .pte with an eh00 header: its Program root and segments. */
export function readPte(file: Uint8Array): PteFile {
  const header = view(file);
  const programSize = Number(header.getBigUint64(16, true));
  const base = Number(header.getBigUint64(24, true));
  const program = FlatTable.root(file.subarray(0, programSize));
  const segments = program.tables(4);
  return {
    program,
    segment: (index) => {
      const segment = segments[index] as FlatTable;
      const start = base + Number(segment.u64(0));
      return file.subarray(start, start + Number(segment.u64(1)));
    },
  };
}

/** The XNNGraph root of an XNNPACK payload, through its XH00 header. */
export function xnnGraphOf(payload: Uint8Array): FlatTable {
  const header = view(payload);
  const offset = header.getUint32(10, true);
  return FlatTable.root(payload.subarray(offset, offset + header.getUint32(14, true)));
}

/** The named data of a .ptd: key → bytes. */
export function readPtd(file: Uint8Array): Map<string, Uint8Array> {
  const header = view(file);
  const flatbufferEnd = Number(header.getBigUint64(16, true) + header.getBigUint64(24, true));
  const base = Number(header.getBigUint64(32, true));
  const root = FlatTable.root(file.subarray(0, flatbufferEnd));
  const segments = root.tables(1);
  const out = new Map<string, Uint8Array>();
  for (const entry of root.tables(2)) {
    const segment = segments[entry.u32(1)] as FlatTable;
    const start = base + Number(segment.u64(0));
    out.set(entry.str(0) as string, file.subarray(start, start + Number(segment.u64(1))));
  }
  return out;
}
