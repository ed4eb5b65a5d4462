import {
  alignUp,
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  DEFAULT_PAGE_SIZE,
  decodeHeader,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  entriesByName,
  isXpwcFormatError,
  readTrailer,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  type XpwcEntry,
  type XpwcEntryV3,
} from '@memlayer/cache-format';
import { type BackendChoice, pageSize } from '@memlayer/mmap-native';
import { WeightsCacheError } from '../errors.js';
import { nodeFs } from '../node-fs.js';
import { removeDeadTemps, writeAll, writeFileAtomically } from './atomic-replace.js';
import { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';
import { chooseEvictions } from './eviction.js';

export interface CompactOptions {
  readonly backend?: BackendChoice | undefined;
  /** Called after each copied chunk with the live bytes copied so far and their total. */
  readonly onProgress?: ((copiedBytes: number, totalBytes: number) => void) | undefined;
  /** Follow a symlink at the path's last component (default false: refused). */
  readonly followSymlinks?: boolean | undefined;
  /** Longest wait for the file lock in ms (default 5000); then ERR_CACHE_COMPACT_FAILED. */
  readonly lockTimeoutMs?: number | undefined;
  /**
   * Disk budget: least recently used entries (by `lastUsed`, unknown first) not in `keep`
   * are left out until the compacted file fits.
   */
  readonly maxFileBytes?: number | undefined;
  readonly keep?: ReadonlySet<string> | undefined;
  readonly lastUsed?: ReadonlyMap<string, number> | undefined;
}

export interface CompactResult {
  readonly version: 2 | 3;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** Live entries copied. */
  readonly entries: number;
  /** v3 entries whose data failed its CRC32C: left out (the next run repacks them). */
  readonly droppedEntries: number;
  /** Entries left out to fit `maxFileBytes`, and their data bytes. */
  readonly evictedEntries: number;
  readonly evictedBytes: number;
}

/** Bytes copied per read/write while compacting (bounded memory for any entry size). */
const COPY_CHUNK_BYTES = 8 << 20;

const DEFAULT_COMPACT_LOCK_TIMEOUT_MS = 5000;

/**
 * Rewrites only the live entries of the committed index into a new file in the same
 * folder and renames it over `path`. Processes that still map the old file keep its inode
 * and bytes; their next critical section sees the new file. Runs under the file lock, so
 * no commit is lost. The format (v2 or v3), the identity, the mode and the owner are kept.
 * Temp files of compactions killed before their rename are removed first; a v3 file with
 * no commit yet compacts to an empty v3 file.
 */
export function compact(path: string, options: CompactOptions = {}): CompactResult {
  if (!nodeFs().existsSync(path)) {
    throw new WeightsCacheError('ERR_CACHE_COMPACT_FAILED', `No cache file at ${path}`);
  }
  let file: CacheFile | null = null;
  try {
    removeDeadTemps(path);
    for (let attempt = 0; attempt < 8; attempt++) {
      file = CacheFile.open(path, {
        backend: options.backend,
        followSymlinks: options.followSymlinks ?? false,
        fileMode: 0o600,
        create: false,
      });
      const opened = file;
      const timeout = options.lockTimeoutMs ?? DEFAULT_COMPACT_LOCK_TIMEOUT_MS;
      const result = opened.withLock('exclusive', timeout, () =>
        opened.isReplaced() ? null : compactLocked(opened, options),
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

/** The committed trailer, or an empty v3 one for a v3 file that has no commit yet. */
function readLive(file: CacheFile, size: number) {
  try {
    const { trailer, commit } = readTrailer((o, l) => file.read(o, l), size, { lenient: true });
    return {
      version: trailer.version,
      identity: trailer.version === 3 ? trailer.identity : null,
      page: commit?.header.pageSize ?? null,
      entries: [...entriesByName<XpwcEntry>(trailer.entries).values()],
    };
  } catch (error) {
    if (!isXpwcFormatError(error) || error.code !== 'ERR_XPWC_NO_COMMIT') throw error;
    const header = decodeHeader(file.read(0, V3_HEADER_READ_SIZE));
    return { version: 3 as const, identity: null, page: header.pageSize, entries: [] };
  }
}

function compactLocked(file: CacheFile, options: CompactOptions): CompactResult {
  const bytesBefore = file.size();
  const read = readLive(file, bytesBefore);
  const page = read.page ?? Math.max(pageSize(), DEFAULT_PAGE_SIZE);
  const { kept, evicted } = chooseEvictions(read.entries, page, options);
  const live = kept;
  const version = read.version;
  const onProgress = options.onProgress;
  let dropped = 0;
  let bytesAfter = 0;
  const totalBytes = live.reduce((sum, entry) => sum + entry.dataSize, 0);
  let copiedBytes = 0;
  const progress = (bytes: number) => {
    copiedBytes += bytes;
    onProgress?.(copiedBytes, totalBytes);
  };
  const replace = { fileMode: 0o600, keepFrom: file.stat() };
  writeFileAtomically(file.path, replace, (fd) => {
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
      const layout = 'layout' in entry ? entry.layout : undefined;
      const copied = {
        name: entry.name,
        fileOffset,
        dataSize: entry.dataSize,
        seed: entry.seed,
        fingerprint: 'fingerprint' in entry ? entry.fingerprint : 0,
        crc32c: crc,
      };
      placed.push(layout === undefined ? copied : { ...copied, layout });
      end = fileOffset + alignUp(Math.max(entry.dataSize, 1), page);
    }
    const indexStart = alignUp(end, page);
    if (version === 3 && read.identity === null) {
      bytesAfter = V3_HEADER_SIZE; // no commit to carry over: a fresh header alone
    } else if (version === 3) {
      const bytes = encodeTrailer(placed, {
        indexStart,
        identity: read.identity ?? '',
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
    nodeFs().ftruncateSync(fd, bytesAfter);
  });
  return {
    version,
    bytesBefore,
    bytesAfter,
    entries: live.length - dropped,
    droppedEntries: dropped,
    evictedEntries: evicted.length,
    evictedBytes: evicted.reduce((sum, entry) => sum + entry.dataSize, 0),
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
    crc = dataCrc32c(chunk, crc);
    writeAll(fd, chunk, to + done);
    done += chunk.byteLength;
    progress(chunk.byteLength);
  }
  return crc;
}
