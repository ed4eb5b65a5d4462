import { DTYPE_BYTES, type SafetensorsDtype } from './dtypes.js';
import { MAX_RANK, MAX_SAFE_BYTES, MAX_TENSOR_NAME_BYTES, MAX_TENSORS } from './limits.js';
import { TensorTable } from './tensor-table.js';

const DIGEST_BYTES = 32;
/** Bytes per element by dtype name (a Map: any JSON value is a safe key). */
const DTYPE_UNITS = new Map<unknown, number>(Object.entries(DTYPE_BYTES));
const HASHED_FLAGS = /^[01]*$/;

/**
 * A file's tensor table as the record stores it: one JSON array per column, not an object
 * per tensor, so a warm start parses a few arrays per file and checks each column in one
 * loop. `shapes` holds each tensor's rank followed by its sizes; `hashed` has one '0'/'1'
 * per tensor; `digests` is the base64 of 32 bytes per tensor (zero when not hashed), so a
 * digest needs no check of its characters: it is made from bytes.
 */
export interface EncodedTable {
  names: string[];
  dtypes: string[];
  shapes: number[];
  offsets: number[];
  hashed: string;
  digests: string;
}

export function encodeTable(table: TensorTable): EncodedTable {
  const n = table.size;
  const shapes: number[] = [];
  const offsets: number[] = new Array(n);
  let hashed = '';
  const digests = Buffer.alloc(DIGEST_BYTES * n);
  for (let i = 0; i < n; i++) {
    const start = table.shapeStarts[i] as number;
    const end = start + (table.ranks[i] as number);
    shapes.push(end - start);
    for (let at = start; at < end; at++) shapes.push(table.dims[at] as number);
    offsets[i] = table.fileOffsets[i] as number;
    const digest = table.digest(i);
    hashed += digest === undefined ? '0' : '1';
    if (digest !== undefined) digests.write(digest, DIGEST_BYTES * i, DIGEST_BYTES, 'hex');
  }
  return {
    names: table.names.slice(),
    dtypes: table.dtypes.slice(),
    shapes,
    offsets,
    hashed,
    digests: digests.toString('base64'),
  };
}

/**
 * The table of a file of `fileSize` bytes, checked like a header's: every size is a safe
 * integer, every tensor lies inside the file after the 8-byte length, names are 1..1024
 * units. Throws a plain Error on anything else (the caller ignores the record's entry).
 */
export function decodeTable(raw: unknown, fileSize: number): TensorTable {
  const { names, dtypes, shapes, offsets, hashed, digests } = (raw ?? {}) as EncodedTable;
  if (!Array.isArray(names) || names.length > MAX_TENSORS) throw new Error('bad names');
  const n = names.length;
  if (
    !Array.isArray(dtypes) ||
    !Array.isArray(shapes) ||
    !Array.isArray(offsets) ||
    dtypes.length !== n ||
    offsets.length !== n ||
    shapes.length > n * (MAX_RANK + 1) ||
    typeof hashed !== 'string' ||
    hashed.length !== n ||
    !HASHED_FLAGS.test(hashed) ||
    typeof digests !== 'string'
  ) {
    throw new Error('bad columns');
  }
  const byteLengths = new Array<number>(n);
  const ranks = new Uint8Array(n);
  const shapeStarts = new Uint32Array(n);
  const bad = measureTensors({ names, dtypes, shapes, offsets }, fileSize, {
    ranks,
    shapeStarts,
    byteLengths,
  });
  if (bad >= 0) throw new Error(`bad tensor ${bad}`);
  const bytes = Buffer.from(digests, 'base64');
  if (bytes.byteLength !== DIGEST_BYTES * n) throw new Error('bad digests');
  return new TensorTable(
    {
      names,
      dtypes: dtypes as SafetensorsDtype[],
      fileOffsets: offsets,
      byteLengths,
      ranks,
      shapeStarts,
      dims: shapes,
    },
    { hex: bytes.toString('hex'), hashed },
  );
}

/**
 * Checks every tensor and fills its rank, shape start and byte length; returns the index of
 * the first bad tensor, or -1 (a trailing size no tensor owns is bad too: index n). No info
 * object is made here: a warm start reads the columns, and an info (with its shape array)
 * made for every tensor would be tens of thousands of objects the GC copies for nothing.
 * Kept small: it runs once per tensor of every recalled file, usually before the JIT has
 * warmed up.
 */
function measureTensors(
  columns: {
    names: readonly unknown[];
    dtypes: readonly unknown[];
    shapes: readonly unknown[];
    offsets: readonly unknown[];
  },
  fileSize: number,
  out: {
    ranks: Uint8Array;
    shapeStarts: Uint32Array;
    byteLengths: number[];
  },
): number {
  const { names, dtypes, shapes, offsets } = columns;
  const { ranks, shapeStarts, byteLengths } = out;
  const n = names.length;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const name = names[i];
    const dtype = dtypes[i] as SafetensorsDtype;
    const unit = DTYPE_UNITS.get(dtype);
    const rank = shapes[at++] as number;
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > MAX_TENSOR_NAME_BYTES ||
      unit === undefined ||
      (rank | 0) !== rank ||
      rank < 0 ||
      rank > MAX_RANK ||
      at + rank > shapes.length
    ) {
      return i;
    }
    ranks[i] = rank;
    shapeStarts[i] = at;
    let elements = 1;
    for (const end = at + rank; at < end; at++) {
      // A 32-bit test first: Number.isSafeInteger only beyond it.
      const size = shapes[at] as number;
      if (size >>> 0 !== size && !(Number.isSafeInteger(size) && size >= 0)) return i;
      elements *= size;
    }
    const byteLength = elements * unit;
    const fileOffset = offsets[i] as number;
    if (
      (fileOffset >>> 0 !== fileOffset && !Number.isSafeInteger(fileOffset)) ||
      byteLength > MAX_SAFE_BYTES ||
      fileOffset < 8 ||
      fileOffset + byteLength > fileSize
    ) {
      return i;
    }
    byteLengths[i] = byteLength;
  }
  return at === shapes.length ? -1 : n;
}
