import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  decodeHeader,
  decodeTrailer,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  entriesByName,
  isV3Header,
  isXpwcFormatError,
  planCommit,
  readCommittedTrailer,
  readTrailer,
  V3_HEADER_FIXED_SIZE,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  type XpwcEntry,
  type XpwcEntryV2,
  type XpwcEntryV3,
  type XpwcFormatError,
} from '@memlayer/cache-format';
import type { CacheFile } from './cache-file.js';

export type CacheFormat = 2 | 3;

/** The newest committed index of a cache file, as far as this process knows it. */
export interface CommittedIndex {
  readonly version: CacheFormat;
  /** One entry per name (a later duplicate wins, as ExecuTorch's loader does). */
  readonly entries: readonly XpwcEntry[];
  readonly indexStart: number;
  readonly trailerLength: number;
  /** v3 commit generation; 0 for v2. */
  readonly generation: number;
}

export type Inspection =
  | { readonly kind: 'index'; readonly format: CacheFormat; readonly index: CommittedIndex | null }
  | { readonly kind: 'unusable'; readonly error: XpwcFormatError };

/** First byte a data region may use: after the v3 header region, at 0 in a v2 file. */
export function dataStartOf(format: CacheFormat): number {
  return format === 3 ? V3_HEADER_SIZE : 0;
}

function toIndex(trailer: ReturnType<typeof decodeTrailer>, generation: number): CommittedIndex {
  return {
    version: trailer.version,
    entries: [...entriesByName<XpwcEntry>(trailer.entries).values()],
    indexStart: trailer.indexStart,
    trailerLength: trailer.trailerEnd - trailer.indexStart,
    generation,
  };
}

/**
 * Reads the committed index of an open cache file (call under the file lock). An empty
 * file gets a fresh header in `format`; a v3 file whose header is valid but which has no
 * usable commit yet (other writers still appending, or both slots lost) is appended to as
 * it is. Anything else the codec rejects (v1, identity mismatch, a damaged header, a torn
 * v2 footer) is `unusable`: the caller rebuilds the file.
 */
export function inspectCacheFile(
  file: CacheFile,
  format: CacheFormat,
  identity: string,
  pageSize: number,
): Inspection {
  const size = file.size();
  if (size === 0) {
    writeFreshHeader(file, format, pageSize);
    return { kind: 'index', format, index: null };
  }
  const read = (offset: number, length: number) => file.read(offset, length);
  try {
    const { trailer, commit } = readTrailer(read, size, { expectedIdentity: identity });
    return {
      kind: 'index',
      format: trailer.version,
      index: toIndex(trailer, commit?.slot.generation ?? 0),
    };
  } catch (error) {
    if (!isXpwcFormatError(error)) throw error;
    if (error.code === 'ERR_XPWC_NO_COMMIT' && hasV3Header(file, size)) {
      return { kind: 'index', format: 3, index: null };
    }
    return { kind: 'unusable', error };
  }
}

function hasV3Header(file: CacheFile, size: number): boolean {
  return size >= V3_HEADER_READ_SIZE && isV3Header(file.read(0, V3_HEADER_FIXED_SIZE));
}

function writeFreshHeader(file: CacheFile, format: CacheFormat, pageSize: number): void {
  if (format === 2) return; // v2 has no header: data starts at offset 0
  file.write(encodeHeader({ pageSize }), 0);
  file.datasync();
}

/**
 * Commits an index of `entries` (call under the file lock, data already durable):
 * v3: trailer appended at end of file + fdatasync, then the commit slot + fdatasync
 * (cache-format's writer protocol). v2: trailer appended + fdatasync, nothing more: the
 * footer at end of file is the only pointer ExecuTorch knows.
 */
export function commitIndex(
  file: CacheFile,
  format: CacheFormat,
  entries: readonly XpwcEntryV3[],
  identity: string,
): CommittedIndex | null {
  const indexStart = file.size();
  if (format === 2) {
    // An empty v2 index is not a valid file (ExecuTorch rejects it): write nothing.
    if (entries.length === 0) return null;
    const v2: XpwcEntryV2[] = entries.map(({ name, fileOffset, dataSize, seed }) => ({
      name,
      fileOffset,
      dataSize,
      seed,
    }));
    const bytes = encodeTrailer(v2, { version: 2, indexStart });
    file.write(bytes, indexStart);
    file.datasync();
    return toIndex(decodeTrailer(bytes, indexStart + bytes.byteLength), 0);
  }
  const size = indexStart;
  const read = (offset: number, length: number) => file.read(offset, length);
  const header = decodeHeader(file.read(0, V3_HEADER_READ_SIZE));
  let loaded: Parameters<typeof planCommit>[1] = null;
  try {
    loaded = readCommittedTrailer(read, size);
  } catch (error) {
    if (!isXpwcFormatError(error) || error.code !== 'ERR_XPWC_NO_COMMIT') throw error;
  }
  const plan = planCommit(header.slots, loaded);
  const bytes = encodeTrailer(entries, {
    indexStart,
    identity,
    generation: plan.generation,
    prevTrailerEnd: plan.prevTrailerEnd,
    prevGeneration: plan.prevGeneration,
  });
  file.write(bytes, indexStart);
  file.datasync();
  file.write(
    encodeCommitSlot(commitSlotForTrailer(bytes), plan.slotIndex),
    COMMIT_SLOT_OFFSETS[plan.slotIndex],
  );
  file.datasync();
  return toIndex(decodeTrailer(bytes, indexStart + bytes.byteLength), plan.generation);
}

/** Newest committed index of `file` (under the lock), or null when there is none. */
export function readNewestIndex(file: CacheFile, identity: string): CommittedIndex | null {
  const size = file.size();
  if (size === 0) return null;
  try {
    const { trailer, commit } = readTrailer((o, l) => file.read(o, l), size, {
      expectedIdentity: identity,
    });
    return toIndex(trailer, commit?.slot.generation ?? 0);
  } catch (error) {
    if (isXpwcFormatError(error)) return null;
    throw error;
  }
}

/**
 * Puts a fresh, empty cache file at `path` without truncating the old one: the new file
 * is written beside it and renamed over it, so processes that still map the old file keep
 * its inode and their bytes (rename is atomic within a folder).
 */
export function replaceWithFreshFile(path: string, format: CacheFormat, pageSize: number): void {
  writeFileAtomically(path, (fd) => {
    if (format === 3) writeAll(fd, encodeHeader({ pageSize }), 0);
  });
}

/** Writes a new file in `path`'s folder through `fill`, fsyncs it and renames it over `path`. */
export function writeFileAtomically(path: string, fill: (fd: number) => void): void {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  const fd = openSync(temp, 'wx', 0o666);
  try {
    fill(fd);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
  syncFolder(dirname(path));
}

export function writeAll(fd: number, bytes: Uint8Array, offset: number): void {
  let done = 0;
  while (done < bytes.byteLength) {
    done += writeSync(fd, bytes, done, bytes.byteLength - done, offset + done);
  }
}

/** fsync of the folder makes the rename itself durable (best effort where folders cannot be opened). */
function syncFolder(folder: string): void {
  let fd: number;
  try {
    fd = openSync(folder, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    closeSync(fd);
  }
}
