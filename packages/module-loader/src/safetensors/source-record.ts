import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readRegularFile } from '../files/read-regular-file.js';
import { DTYPE_BYTES, isSafetensorsDtype } from './dtypes.js';
import type { SafetensorsTensorInfo } from './header.js';
import { type FileIdentity, sameIdentity } from './identity.js';
import { type KnownFile, type KnownFileSource, trustworthy } from './known-files.js';
import { MAX_RANK, MAX_TENSOR_NAME_BYTES } from './limits.js';

export const SOURCE_RECORD_FORMAT = 'memlayer-weight-sources';
export const SOURCE_RECORD_VERSION = 1;
/** A record larger than this is ignored unread (it is a memo: losing it costs one re-hash). */
export const MAX_SOURCE_RECORD_BYTES = 64 * 1024 * 1024;
/** Files a record remembers; the least recently saved are dropped beyond this. */
export const MAX_SOURCE_RECORD_FILES = 1024;
/** Warning code of a record that is unreadable, corrupt or could not be written. */
export const SOURCE_RECORD_WARNING = 'MEMLAYER_SOURCE_RECORD';

/** Path of the record kept next to a cache file. */
export function sourceRecordPath(cachePath: string): string {
  return `${resolve(cachePath)}.sources.json`;
}

/**
 * The identities, tensor tables and tensor digests of the weight files that fed a cache
 * file, kept next to it (`<cache>.sources.json`) so a fresh process recognises unchanged
 * files from a stat. Read once per process and path (size-capped; corrupt ⇒ ignored with a
 * warning), written by temp file + rename (readers see the old or the new record, whole).
 */
export class SourceRecord implements KnownFileSource {
  readonly path: string;
  #files: Map<string, KnownFile> | null = null;

  constructor(cachePath: string) {
    this.path = sourceRecordPath(cachePath);
  }

  /** What the record says about a path, trusted or not (for verification). */
  entry(path: string): KnownFile | undefined {
    return this.#load().get(path);
  }

  recall(identity: FileIdentity): KnownFile | undefined {
    const known = this.#load().get(identity.path);
    return trustworthy(known, identity) ? known : undefined;
  }

  /**
   * Remembers `files`; writes only when one is new, changed, or has digests the record lacks.
   * Other processes' entries written meanwhile are kept (the file is read again first).
   */
  save(files: readonly KnownFile[]): boolean {
    const current = this.#load();
    const fresh = files.filter((file) => !covers(current.get(file.identity.path), file));
    if (fresh.length === 0) return false;
    const merged = readRecord(this.path) ?? new Map<string, KnownFile>();
    for (const file of files) {
      merged.delete(file.identity.path);
      merged.set(file.identity.path, file);
    }
    while (merged.size > MAX_SOURCE_RECORD_FILES)
      merged.delete(merged.keys().next().value as string);
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      writeFileSync(temp, encodeRecord([...merged.values()]), { flag: 'wx', mode: 0o644 });
      renameSync(temp, this.path);
    } catch (error) {
      rmSync(temp, { force: true });
      warn(`cannot write ${this.path} (${(error as Error).message}); digests are not remembered`);
      return false;
    }
    for (const file of merged.values()) persistedDigests.set(file, file.digests.size);
    this.#files = merged;
    return true;
  }

  #load(): Map<string, KnownFile> {
    this.#files ??= readRecord(this.path) ?? new Map();
    return this.#files;
  }
}

const records = new Map<string, SourceRecord>();

/** The record of a cache path, shared in the process (read at most once). */
export function sourceRecordFor(cachePath: string): SourceRecord {
  const path = sourceRecordPath(cachePath);
  let record = records.get(path);
  if (record === undefined) {
    record = new SourceRecord(cachePath);
    records.set(path, record);
  }
  return record;
}

/** Forgets the records read in this process (tests; another process rewrote them). */
export function forgetSourceRecords(): void {
  records.clear();
}

/** Whether `stored` already holds everything `file` knows. */
/** Digests each remembered file had when it was last read from or written to disk. */
const persistedDigests = new WeakMap<KnownFile, number>();

function covers(stored: KnownFile | undefined, file: KnownFile): boolean {
  // The object read from disk: covered unless digests were added to it since.
  if (stored === file) return persistedDigests.get(file) === file.digests.size;
  if (stored === undefined || !sameIdentity(stored.identity, file.identity)) return false;
  // A racy record is replaced by one read after the file settled.
  if (!trustworthy(stored, file.identity) && trustworthy(file, file.identity)) return false;
  for (const [name, digest] of file.digests) if (stored.digests.get(name) !== digest) return false;
  return true;
}

type TensorRow = [string, string, number[], number, number, string | null];

function encodeRecord(files: readonly KnownFile[]): string {
  return JSON.stringify({
    format: SOURCE_RECORD_FORMAT,
    version: SOURCE_RECORD_VERSION,
    files: files.map(({ identity, readAtNs, tensors, digests }) => ({
      path: identity.path,
      dev: String(identity.dev),
      ino: String(identity.ino),
      size: identity.size,
      mtimeNs: String(identity.mtimeNs),
      ctimeNs: String(identity.ctimeNs),
      readAtNs: String(readAtNs),
      tensors: tensors.map(
        (t): TensorRow => [
          t.name,
          t.dtype,
          t.shape,
          t.fileOffset,
          t.byteLength,
          digests.get(t.name) ?? null,
        ],
      ),
    })),
  });
}

/** The record's files, or undefined when it is absent; corrupt ⇒ undefined with a warning. */
function readRecord(path: string): Map<string, KnownFile> | undefined {
  let text: string;
  try {
    text = new TextDecoder().decode(
      readRegularFile(path, MAX_SOURCE_RECORD_BYTES, { file: path, field: '$' }),
    );
  } catch (error) {
    const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
    if (cause?.code !== 'ENOENT') warn(`ignoring ${path}: ${(error as Error).message}`);
    return undefined;
  }
  try {
    return decodeRecord(text);
  } catch (error) {
    warn(`ignoring ${path}: ${(error as Error).message}`);
    return undefined;
  }
}

const DIGEST = /^[0-9a-f]{64}$/;
const BIGINT = /^[0-9]{1,20}$/;

function decodeRecord(text: string): Map<string, KnownFile> {
  const json = JSON.parse(text) as Record<string, unknown>;
  if (json?.['format'] !== SOURCE_RECORD_FORMAT || json['version'] !== SOURCE_RECORD_VERSION) {
    throw new Error(`not a ${SOURCE_RECORD_FORMAT} v${SOURCE_RECORD_VERSION} record`);
  }
  const files = json['files'];
  if (!Array.isArray(files) || files.length > MAX_SOURCE_RECORD_FILES) throw new Error('bad files');
  const out = new Map<string, KnownFile>();
  for (const raw of files as Record<string, unknown>[]) {
    const identity = decodeIdentity(raw);
    const rows = raw['tensors'];
    if (!Array.isArray(rows)) throw new Error(`${identity.path}: bad tensors`);
    const tensors: SafetensorsTensorInfo[] = [];
    const digests = new Map<string, string>();
    for (const row of rows) {
      const tensor = decodeTensor(row, identity.size);
      tensors.push(tensor);
      const digest = (row as TensorRow)[5];
      if (digest !== null) {
        if (typeof digest !== 'string' || !DIGEST.test(digest)) throw new Error('bad digest');
        digests.set(tensor.name, digest);
      }
    }
    const readAtNs = raw['readAtNs'];
    if (typeof readAtNs !== 'string' || !BIGINT.test(readAtNs)) throw new Error('bad readAtNs');
    const known = { identity, readAtNs: BigInt(readAtNs), tensors, digests };
    persistedDigests.set(known, digests.size);
    out.set(identity.path, known);
  }
  return out;
}

function decodeIdentity(raw: Record<string, unknown>): FileIdentity {
  const { path, dev, ino, size, mtimeNs, ctimeNs } = raw ?? {};
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0')) {
    throw new Error('bad path');
  }
  for (const value of [dev, ino, mtimeNs, ctimeNs]) {
    if (typeof value !== 'string' || !BIGINT.test(value)) throw new Error(`${path}: bad identity`);
  }
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw new Error(`${path}: bad size`);
  return {
    path,
    dev: BigInt(dev as string),
    ino: BigInt(ino as string),
    size: size as number,
    mtimeNs: BigInt(mtimeNs as string),
    ctimeNs: BigInt(ctimeNs as string),
  };
}

/** Checked like a header entry: a record never leads a view outside its file. */
function decodeTensor(row: unknown, fileSize: number): SafetensorsTensorInfo {
  if (!Array.isArray(row) || row.length !== 6) throw new Error('bad tensor row');
  // Indexed reads, not array destructuring (which iterates): once per tensor of a record.
  const tensorRow = row as TensorRow;
  const name = tensorRow[0];
  const dtype = tensorRow[1];
  const shape = tensorRow[2];
  const fileOffset = tensorRow[3];
  const byteLength = tensorRow[4];
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_TENSOR_NAME_BYTES) {
    throw new Error('bad tensor name');
  }
  if (!isSafetensorsDtype(dtype)) throw new Error(`${name}: bad dtype`);
  if (!Array.isArray(shape) || shape.length > MAX_RANK) throw new Error(`${name}: bad shape`);
  let elements = 1;
  for (let i = 0; i < shape.length; i++) {
    const size = shape[i] as number;
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

function warn(message: string): void {
  process.emitWarning(message, { code: SOURCE_RECORD_WARNING });
}
