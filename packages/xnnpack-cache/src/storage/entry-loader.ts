import { alignUp, crc32cOf, type XpwcEntry } from '@memlayer/cache-format';
import type { Mapping } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import type { FileRegion } from './file-region.js';
import type { VerifyMode } from './file-storage-options.js';
import { type CommittedIndex, dataStartOf } from './index-io.js';
import { mapEntriesInWindows } from './load-windows.js';
import type { PackedRegion, StoredEntry } from './packed-storage.js';
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
 * Presents the committed entries of `file` as stored entries over read-only load windows,
 * registering each one's file region in `regions`.
 */
export function loadCommittedEntries(
  file: CacheFile,
  index: CommittedIndex,
  settings: LoadSettings,
  regions: Map<PackedRegion, FileRegion>,
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
  let kept = 0;
  let dropped = 0;
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as XpwcEntry;
    const bytes = views[i];
    // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
    if (bytes === null || bytes === undefined) {
      dropped++;
      continue;
    }
    const crc = 'crc32c' in entry ? entry.crc32c : undefined;
    if (verifyAll && crc !== undefined && crc32cOf(bytes) !== crc) {
      dropped++;
      emitCacheWarning(
        'MEMLAYER_CACHE_CORRUPT_ENTRY',
        `Packed entry "${entry.name}" of ${file.path} fails its CRC32C; it will be repacked`,
      );
      continue;
    }
    const dataSize = entry.dataSize;
    const region: PackedRegion = {
      bytes,
      reservedBytes: alignUp(dataSize > 0 ? dataSize : 1, pageSize),
    };
    regions.set(region, {
      file,
      fileOffset: entry.fileOffset,
      chunk: null,
      committed: true,
      crc32c: crc,
      crcSize: dataSize,
    });
    const fingerprint = 'fingerprint' in entry ? entry.fingerprint : 0;
    const layout = 'layout' in entry ? entry.layout : undefined;
    entries[kept++] =
      layout === undefined
        ? { name: entry.name, seed: entry.seed, fingerprint, dataSize, region }
        : { name: entry.name, seed: entry.seed, fingerprint, dataSize, region, layout };
  }
  entries.length = kept;
  return { windows, entries, dropped };
}
