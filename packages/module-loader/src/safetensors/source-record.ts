import { resolve } from 'node:path';
import { savePendingNow, saveSoon } from '../files/deferred-saves.js';
import { readMemoFile, replaceMemoFile } from '../files/memo-file.js';
import { type FileIdentity, sameIdentity } from './identity.js';
import {
  type KnownFile,
  type KnownFileSource,
  RememberedFile,
  remembered,
  trustworthy,
} from './known-files.js';
import {
  type DecodedRecord,
  decodeEntry,
  decodeRecord,
  encodeRecord,
  MAX_SOURCE_RECORD_FILES,
  type RecordEntry,
  SOURCE_RECORD_FORMAT,
  SOURCE_RECORD_VERSION,
} from './record-codec.js';

export { MAX_SOURCE_RECORD_FILES, SOURCE_RECORD_FORMAT, SOURCE_RECORD_VERSION };
/** A record larger than this is ignored unread (it is a memo: losing it costs one re-hash). */
export const MAX_SOURCE_RECORD_BYTES = 64 * 1024 * 1024;
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
 * warning); a file's table is decoded only when that file is recalled (a corrupt table ⇒
 * that file is ignored with a warning). Written by temp file + rename (readers see the old
 * or the new record, whole).
 */
export class SourceRecord implements KnownFileSource {
  readonly path: string;
  #files: Map<string, RecordEntry> | null = null;
  /** Corrupt tables found so far (one warning per record, not one per file). */
  #corrupt = 0;

  constructor(cachePath: string) {
    this.path = sourceRecordPath(cachePath);
  }

  /** Real paths of the weight files the record knows. */
  paths(): string[] {
    return [...this.#load().keys()];
  }

  /** What the record says about a path, trusted or not (for verification). */
  entry(path: string): KnownFile | undefined {
    return this.#decoded(this.#load(), path);
  }

  recall(identity: FileIdentity): KnownFile | undefined {
    const files = this.#load();
    // Identity first: the table of a file that changed is never decoded.
    if (!trustworthy(files.get(identity.path), identity)) return undefined;
    return this.#decoded(files, identity.path);
  }

  /** save(files) after the method is runnable (files/deferred-saves.ts). */
  saveLater(files: readonly KnownFile[]): void {
    saveSoon(this.path, () => this.save(files), warn);
  }

  /**
   * Remembers `files`; writes only when one is new, changed, or has digests the record lacks
   * (or the record is version 1). Other processes' entries written meanwhile are kept (the
   * file is read again first).
   */
  save(files: readonly KnownFile[]): boolean {
    const current = this.#load();
    const fresh = files.filter((file) => !this.#covers(current, file));
    if (fresh.length === 0) return false;
    const merged = readRecord(this.path)?.files ?? new Map<string, RecordEntry>();
    for (const file of files) {
      merged.delete(file.identity.path);
      merged.set(file.identity.path, remembered(file));
    }
    // Another process's entries are written again only if their tables are sound.
    for (const [path, entry] of merged) {
      if (!(entry instanceof RememberedFile) && this.#decoded(merged, path) === undefined) {
        merged.delete(path);
      }
    }
    while (merged.size > MAX_SOURCE_RECORD_FILES)
      merged.delete(merged.keys().next().value as string);
    const error = replaceMemoFile(this.path, encodeRecord(merged.values()));
    if (error !== undefined) {
      warn(`cannot write ${this.path} (${error.message}); digests are not remembered`);
      return false;
    }
    for (const file of merged.values()) {
      if (file instanceof RememberedFile) persistedDigests.set(file, file.table.digestCount);
    }
    this.#files = merged;
    return true;
  }

  #load(): Map<string, RecordEntry> {
    // A save left for later updates #files: run it before they are read.
    savePendingNow(this.path);
    this.#files ??= readRecord(this.path)?.files ?? new Map();
    return this.#files;
  }

  /** The entry of `path` with its table decoded; a corrupt table drops the entry. */
  #decoded(files: Map<string, RecordEntry>, path: string): RememberedFile | undefined {
    const entry = files.get(path);
    if (entry === undefined || entry instanceof RememberedFile) return entry;
    try {
      const decoded = decodeEntry(entry);
      persistedDigests.set(decoded, decoded.table.digestCount);
      files.set(path, decoded);
      return decoded;
    } catch (error) {
      if (this.#corrupt++ === 0) {
        warn(
          `ignoring ${path} in ${this.path} (and any other corrupt file): ${(error as Error).message}`,
        );
      }
      files.delete(path);
      return undefined;
    }
  }

  /** Whether the record already holds everything `file` knows. */
  #covers(current: Map<string, RecordEntry>, file: KnownFile): boolean {
    const stored = this.#decoded(current, file.identity.path);
    // The object read from disk: covered unless digests were added to it since.
    if (stored === file) return persistedDigests.get(stored) === stored.table.digestCount;
    if (stored === undefined || !sameIdentity(stored.identity, file.identity)) return false;
    // A racy record is replaced by one read after the file settled.
    if (!trustworthy(stored, file.identity) && trustworthy(file, file.identity)) return false;
    const { table } = remembered(file);
    for (let i = 0; i < table.size; i++) {
      const digest = table.digest(i);
      if (digest === undefined) continue;
      const at = stored.table.indexOf(table.names[i] as string);
      if (at < 0 || stored.table.digest(at) !== digest) return false;
    }
    return true;
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

/**
 * Digests each remembered file had when it was last read from or written to disk as the
 * current version (files read from a version 1 record have none: the next save rewrites).
 */
const persistedDigests = new WeakMap<RememberedFile, number>();

/** The record's files, or undefined when it is absent; corrupt ⇒ undefined with a warning. */
function readRecord(path: string): DecodedRecord | undefined {
  return readMemoFile(
    path,
    MAX_SOURCE_RECORD_BYTES,
    (bytes) => decodeRecord(new TextDecoder().decode(bytes)),
    warn,
  );
}

function warn(message: string): void {
  process.emitWarning(message, { code: SOURCE_RECORD_WARNING });
}
