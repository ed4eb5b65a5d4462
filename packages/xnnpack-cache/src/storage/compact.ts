import { existsSync, ftruncateSync } from 'node:fs';
import {
  alignUp,
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  crc32cOf,
  DEFAULT_PAGE_SIZE,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  entriesByName,
  readTrailer,
  V3_HEADER_SIZE,
  type XpwcEntry,
  type XpwcEntryV3,
} from '@memlayer/cache-format';
import { type BackendChoice, pageSize } from '@memlayer/mmap-native';
import { WeightsCacheError } from '../errors.js';
import { CacheFile } from './cache-file.js';
import { writeAll, writeFileAtomically } from './index-io.js';

export interface CompactOptions {
  readonly backend?: BackendChoice | undefined;
  /** Called after each copied chunk with the live bytes copied so far and their total. */
  readonly onProgress?: ((copiedBytes: number, totalBytes: number) => void) | undefined;
}

export interface CompactResult {
  readonly version: 2 | 3;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** Live entries copied. */
  readonly entries: number;
  /** v3 entries whose data failed its CRC32C: left out (the next run repacks them). */
  readonly droppedEntries: number;
}

/** Bytes copied per read/write while compacting (bounded memory for any entry size). */
const COPY_CHUNK_BYTES = 8 << 20;

/**
 * Rewrites only the live entries of the committed index into a new file in the same
 * folder and renames it over `path` (spec §4.1). Processes that still map the old file
 * keep its inode and bytes; their next critical section sees the new file. Runs under the
 * file lock, so no commit is lost. The format (v2 or v3) and the identity are kept.
 */
export function compact(path: string, options: CompactOptions = {}): CompactResult {
  if (!existsSync(path)) {
    throw new WeightsCacheError('ERR_CACHE_COMPACT_FAILED', `No cache file at ${path}`);
  }
  let file: CacheFile | null = null;
  try {
    for (let attempt = 0; attempt < 8; attempt++) {
      file = CacheFile.open(path, options.backend);
      const opened = file;
      const result = opened.withLock(() =>
        opened.isReplaced() ? null : compactLocked(opened, options.onProgress),
      );
      opened.close();
      file = null;
      if (result !== null) return result;
    }
    throw new Error(`${path} kept being replaced during compaction`);
  } catch (error) {
    file?.close();
    if (error instanceof WeightsCacheError) throw error;
    throw new WeightsCacheError('ERR_CACHE_COMPACT_FAILED', `Could not compact ${path}`, {
      cause: error,
    });
  }
}

function compactLocked(file: CacheFile, onProgress: CompactOptions['onProgress']): CompactResult {
  const bytesBefore = file.size();
  const { trailer, commit } = readTrailer((o, l) => file.read(o, l), bytesBefore);
  const page = commit?.header.pageSize ?? Math.max(pageSize(), DEFAULT_PAGE_SIZE);
  const live = [...entriesByName<XpwcEntry>(trailer.entries).values()];
  const version = trailer.version;
  let dropped = 0;
  let bytesAfter = 0;
  const totalBytes = live.reduce((sum, entry) => sum + entry.dataSize, 0);
  let copiedBytes = 0;
  const progress = (bytes: number) => {
    copiedBytes += bytes;
    onProgress?.(copiedBytes, totalBytes);
  };
  writeFileAtomically(file.path, (fd) => {
    let end = version === 3 ? V3_HEADER_SIZE : 0;
    if (version === 3) writeAll(fd, encodeHeader({ pageSize: page }), 0);
    const placed: XpwcEntryV3[] = [];
    for (const entry of live) {
      const fileOffset = alignUp(end, page);
      const crc = copyRange(file, entry.fileOffset, entry.dataSize, fd, fileOffset, progress);
      if ('crc32c' in entry && crc !== entry.crc32c) {
        dropped++;
        continue; // never carry corrupt bytes into the new file
      }
      placed.push({
        name: entry.name,
        fileOffset,
        dataSize: entry.dataSize,
        seed: entry.seed,
        fingerprint: 'fingerprint' in entry ? entry.fingerprint : 0,
        crc32c: crc,
      });
      end = fileOffset + alignUp(Math.max(entry.dataSize, 1), page);
    }
    const indexStart = alignUp(end, page);
    if (trailer.version === 3) {
      const bytes = encodeTrailer(placed, {
        indexStart,
        identity: trailer.identity,
        generation: 1,
      });
      writeAll(fd, bytes, indexStart);
      writeAll(fd, encodeCommitSlot(commitSlotForTrailer(bytes), 0), COMMIT_SLOT_OFFSETS[0]);
      bytesAfter = indexStart + bytes.byteLength;
    } else if (placed.length > 0) {
      const bytes = encodeTrailer(
        placed.map(({ name, fileOffset, dataSize, seed }) => ({
          name,
          fileOffset,
          dataSize,
          seed,
        })),
        { version: 2, indexStart },
      );
      writeAll(fd, bytes, indexStart);
      bytesAfter = indexStart + bytes.byteLength;
    }
    // A dropped entry's bytes may lie past the end of the new index.
    ftruncateSync(fd, bytesAfter);
  });
  return {
    version,
    bytesBefore,
    bytesAfter,
    entries: live.length - dropped,
    droppedEntries: dropped,
  };
}

/** Copies [from, from + size) of `file` to `to` in `fd`, returning the CRC32C of the bytes. */
function copyRange(
  file: CacheFile,
  from: number,
  size: number,
  fd: number,
  to: number,
  progress: (bytes: number) => void,
): number {
  let crc = 0;
  for (let done = 0; done < size; ) {
    const chunk = file.read(from + done, Math.min(COPY_CHUNK_BYTES, size - done));
    if (chunk.byteLength === 0) throw new Error(`short read at ${from + done} while compacting`);
    crc = crc32cOf(chunk, crc);
    writeAll(fd, chunk, to + done);
    done += chunk.byteLength;
    progress(chunk.byteLength);
  }
  return crc;
}
