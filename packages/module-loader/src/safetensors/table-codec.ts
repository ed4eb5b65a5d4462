import { DTYPE_BYTES, type SafetensorsDtype } from './dtypes.js';
import { MAX_RANK, MAX_SAFE_BYTES, MAX_TENSOR_NAME_BYTES, MAX_TENSORS } from './limits.js';
import { TensorTable } from './tensor-table.js';

const DIGEST_BYTES = 32;
const HASHED = 49; // '1'
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
  let at = 0;
  for (let i = 0; i < n; i++) {
    const name = names[i];
    const dtype = dtypes[i] as SafetensorsDtype;
    const rank = shapes[at++];
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > MAX_TENSOR_NAME_BYTES ||
      typeof dtype !== 'string' ||
      !Object.hasOwn(DTYPE_BYTES, dtype) ||
      typeof rank !== 'number' ||
      !(rank >= 0 && rank <= MAX_RANK) ||
      at + rank > shapes.length
    ) {
      throw new Error(`bad tensor ${i}`);
    }
    ranks[i] = rank;
    shapeStarts[i] = at;
    let elements = 1;
    for (const end = at + rank; at < end; at++) {
      const size = shapes[at];
      if (!Number.isSafeInteger(size) || (size as number) < 0) {
        throw new Error(`bad shape of tensor ${i}`);
      }
      elements *= size as number;
    }
    const byteLength = elements * DTYPE_BYTES[dtype];
    const fileOffset = offsets[i] as number;
    if (
      byteLength > MAX_SAFE_BYTES ||
      !Number.isSafeInteger(fileOffset) ||
      fileOffset < 8 ||
      fileOffset + byteLength > fileSize
    ) {
      throw new Error(`bad offsets of tensor ${i}`);
    }
    byteLengths[i] = byteLength;
  }
  if (at !== shapes.length) throw new Error('bad shapes');
  const bytes = Buffer.from(digests, 'base64');
  if (bytes.byteLength !== DIGEST_BYTES * n) throw new Error('bad digests');
  const present = new Uint8Array(n);
  for (let i = 0; i < n; i++) present[i] = hashed.charCodeAt(i) === HASHED ? 1 : 0;
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
    { hex: bytes.toString('hex'), present },
  );
}
