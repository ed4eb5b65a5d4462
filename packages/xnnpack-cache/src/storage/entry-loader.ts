import { alignUp, crc32cOf, type XpwcEntryV3 } from '@memlayer/cache-format';
import type { Mapping } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import type { FileRegions, LoadedRegion } from './file-region.js';
import type { VerifyMode } from './file-storage-options.js';
import { type CommittedIndex, dataStartOf } from './index-io.js';
import { mapEntriesInWindows } from './load-windows.js';
import type { StoredEntry } from './packed-storage.js';
import { emitCacheWarning } from './warnings.js';

export interface LoadedEntries {
  readonly windows: Mapping[];
  readonly entries: StoredEntry[];
  /** Entries left out: unaligned, too large to map, or (verify 'full') failing their CRC. */
  readonly dropped: number;
}

export interface LoadSettings {
  readonly verify: VerifyMode;
  readonly loadWindowBytes: number;
  readonly pageSize: number;
}

/**
 * Presents the committed entries of `file` as stored entries over read-only load windows;
 * each one's region is a LoadedRegion marked as `regions`' own.
 */
export function loadCommittedEntries(
  file: CacheFile,
  index: CommittedIndex,
  settings: LoadSettings,
  regions: FileRegions,
): LoadedEntries {
  const { windows, views } = mapEntriesInWindows(
    file,
    index.entries,
    dataStartOf(index.version),
    settings.loadWindowBytes,
  );
  // One plain pass (a warm start runs it once per entry): no closure, no spread, objects
  // of one shape each, the page rounding and verify mode read once.
  const list = index.entries;
  const entries: StoredEntry[] = new Array(list.length);
  const verifyAll = settings.verify === 'full';
  const pageSize = settings.pageSize;
  const owner = regions.loadMark;
  let kept = 0;
  let dropped = 0;
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as XpwcEntryV3;
    const bytes = views[i];
    // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
    if (bytes === null || bytes === undefined) {
      dropped++;
      continue;
    }
    // A v2 entry has no crc32c, fingerprint or layout: they read as undefined.
    const crc = entry.crc32c;
    if (verifyAll && crc !== undefined && crc32cOf(bytes) !== crc) {
      dropped++;
      emitCacheWarning(
        'MEMLAYER_CACHE_CORRUPT_ENTRY',
        `Packed entry "${entry.name}" of ${file.path} fails its CRC32C; it will be repacked`,
      );
      continue;
    }
    const dataSize = entry.dataSize;
    // One literal shape for every loaded entry (no constructor: cheap before the JIT runs).
    const region: LoadedRegion = {
      bytes,
      reservedBytes: alignUp(dataSize > 0 ? dataSize : 1, pageSize),
      file,
      fileOffset: entry.fileOffset,
      chunk: null,
      committed: true,
      crc32c: crc,
      crcSize: dataSize,
      owner,
      released: false,
    };
    const fingerprint = entry.fingerprint ?? 0;
    const layout = entry.layout;
    entries[kept++] =
      layout === undefined
        ? { name: entry.name, seed: entry.seed, fingerprint, dataSize, region }
        : { name: entry.name, seed: entry.seed, fingerprint, dataSize, region, layout };
  }
  entries.length = kept;
  return { windows, entries, dropped };
}
