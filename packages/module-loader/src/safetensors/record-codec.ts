import { DTYPE_BYTES, isSafetensorsDtype } from './dtypes.js';
import type { SafetensorsTensorInfo } from './header.js';
import type { FileIdentity } from './identity.js';
import { RememberedFile } from './known-files.js';
import { MAX_RANK, MAX_TENSOR_NAME_BYTES } from './limits.js';
import { decodeTable, encodeTable } from './table-codec.js';
import { TensorTable } from './tensor-table.js';

export const SOURCE_RECORD_FORMAT = 'memlayer-weight-sources';
/** 2: each file's table in columns (1: a JSON row per tensor, still read). */
export const SOURCE_RECORD_VERSION = 2;
/** Files a record remembers; the least recently saved are dropped beyond this. */
export const MAX_SOURCE_RECORD_FILES = 1024;

/**
 * A file of the record whose table is still encoded: it is decoded (and checked) only when
 * the file is recalled, so a record shared by many programs costs a load only its files.
 */
export interface EncodedFile {
  readonly identity: FileIdentity;
  readonly readAtNs: bigint;
  /** The file's columns as parsed, unchecked (see decodeTable). */
  readonly table: unknown;
}

export type RecordEntry = RememberedFile | EncodedFile;

/** A whole record; files read from version 1 are flagged to be written again as version 2. */
export interface DecodedRecord {
  readonly files: Map<string, RecordEntry>;
  readonly legacy: boolean;
}

export function encodeRecord(files: Iterable<RecordEntry>): string {
  const rows: Record<string, unknown>[] = [];
  for (const file of files) {
    const { identity, readAtNs } = file;
    rows.push({
      ...encodeReadIdentity(identity, readAtNs),
      table: file instanceof RememberedFile ? encodeTable(file.table) : file.table,
    });
  }
  return JSON.stringify({
    format: SOURCE_RECORD_FORMAT,
    version: SOURCE_RECORD_VERSION,
    files: rows,
  });
}

/** The files of a record's text; throws a plain Error when it is not a well-formed record. */
export function decodeRecord(text: string): DecodedRecord {
  const json = JSON.parse(text) as Record<string, unknown>;
  const version = json?.['version'];
  if (json?.['format'] !== SOURCE_RECORD_FORMAT || (version !== 1 && version !== 2)) {
    throw new Error(`not a ${SOURCE_RECORD_FORMAT} v1 or v2 record`);
  }
  const files = json['files'];
  if (!Array.isArray(files) || files.length > MAX_SOURCE_RECORD_FILES) throw new Error('bad files');
  const out = new Map<string, RecordEntry>();
  for (const raw of files as Record<string, unknown>[]) {
    const { identity, readAtNs } = decodeReadIdentity(raw);
    if (version === 2) {
      out.set(identity.path, { identity, readAtNs, table: raw['table'] });
    } else {
      out.set(identity.path, decodeV1File(raw, identity, readAtNs));
    }
  }
  return { files: out, legacy: version === 1 };
}

/** The columns of an encoded file, checked against its recorded size (throws when corrupt). */
export function decodeEntry(entry: EncodedFile): RememberedFile {
  const table = decodeTable(entry.table, entry.identity.size);
  return new RememberedFile(entry.identity, entry.readAtNs, table);
}

const BIGINT = /^[0-9]{1,20}$/;

/** A file identity as records store it (bigints in decimal strings: JSON has no bigint). */
export function encodeIdentity(identity: FileIdentity): Record<string, string | number> {
  return {
    path: identity.path,
    dev: String(identity.dev),
    ino: String(identity.ino),
    size: identity.size,
    mtimeNs: String(identity.mtimeNs),
    ctimeNs: String(identity.ctimeNs),
  };
}

/** A file identity and when it was read, as records store them (see trustworthy). */
export function encodeReadIdentity(
  identity: FileIdentity,
  readAtNs: bigint,
): Record<string, unknown> {
  return { ...encodeIdentity(identity), readAtNs: String(readAtNs) };
}

/** The identity and read time of a record's file row; throws when bad. */
export function decodeReadIdentity(raw: Record<string, unknown>): {
  identity: FileIdentity;
  readAtNs: bigint;
} {
  const identity = decodeIdentity(raw);
  return { identity, readAtNs: decodeBigInt(raw?.['readAtNs'], `${identity.path}: bad readAtNs`) };
}

/** A decimal bigint field of a record (ns times, dev, ino): 1–20 digits; else throws `message`. */
export function decodeBigInt(value: unknown, message: string): bigint {
  if (typeof value !== 'string' || !BIGINT.test(value)) throw new Error(message);
  return BigInt(value);
}

/** A file identity as a record stores it (absolute path, decimal dev/ino/times); throws when bad. */
export function decodeIdentity(raw: Record<string, unknown>): FileIdentity {
  const { path, dev, ino, size, mtimeNs, ctimeNs } = raw ?? {};
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0')) {
    throw new Error('bad path');
  }
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw new Error(`${path}: bad size`);
  const bad = `${path}: bad identity`;
  return {
    path,
    dev: decodeBigInt(dev, bad),
    ino: decodeBigInt(ino, bad),
    size: size as number,
    mtimeNs: decodeBigInt(mtimeNs, bad),
    ctimeNs: decodeBigInt(ctimeNs, bad),
  };
}

type V1Row = [string, string, number[], number, number, string | null];
const DIGEST = /^[0-9a-f]{64}$/;

/** A version 1 file: a row [name, dtype, shape, fileOffset, byteLength, digest] per tensor. */
function decodeV1File(
  raw: Record<string, unknown>,
  identity: FileIdentity,
  readAtNs: bigint,
): RememberedFile {
  const rows = raw['tensors'];
  if (!Array.isArray(rows)) throw new Error(`${identity.path}: bad tensors`);
  const tensors: SafetensorsTensorInfo[] = [];
  const digests = new Map<string, string>();
  for (const row of rows) {
    const tensor = decodeV1Tensor(row, identity.size);
    tensors.push(tensor);
    const digest = (row as V1Row)[5];
    if (digest !== null) {
      if (typeof digest !== 'string' || !DIGEST.test(digest)) throw new Error('bad digest');
      digests.set(tensor.name, digest);
    }
  }
  return new RememberedFile(identity, readAtNs, TensorTable.fromInfos(tensors, digests));
}

/** Checked like a header entry: a record never leads a view outside its file. */
function decodeV1Tensor(row: unknown, fileSize: number): SafetensorsTensorInfo {
  if (!Array.isArray(row) || row.length !== 6) throw new Error('bad tensor row');
  const [name, dtype, shape, fileOffset, byteLength] = row as V1Row;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TENSOR_NAME_BYTES) {
    throw new Error('bad tensor name');
  }
  if (!isSafetensorsDtype(dtype)) throw new Error(`${name}: bad dtype`);
  if (!Array.isArray(shape) || shape.length > MAX_RANK) throw new Error(`${name}: bad shape`);
  let elements = 1;
  for (const size of shape) {
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`${name}: bad shape`);
    elements *= size;
  }
  if (
    !Number.isSafeInteger(fileOffset) ||
    fileOffset < 8 ||
    byteLength !== elements * DTYPE_BYTES[dtype] ||
    fileOffset + byteLength > fileSize
  ) {
    throw new Error(`${name}: bad offsets`);
  }
  return { name, dtype, shape, fileOffset, byteLength };
}
