import { alignUp, crc32cOf } from '@memlayer/cache-format';
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
  const entries: StoredEntry[] = [];
  let dropped = 0;
  index.entries.forEach((entry, i) => {
    const bytes = views[i];
    // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
    if (bytes === null || bytes === undefined) {
      dropped++;
      return;
    }
    const crc = 'crc32c' in entry ? entry.crc32c : undefined;
    if (settings.verify === 'full' && crc !== undefined && crc32cOf(bytes) !== crc) {
      dropped++;
      emitCacheWarning(
        'MEMLAYER_CACHE_CORRUPT_ENTRY',
        `Packed entry "${entry.name}" of ${file.path} fails its CRC32C; it will be repacked`,
      );
      return;
    }
    const region: PackedRegion = {
      bytes,
      reservedBytes: alignUp(Math.max(entry.dataSize, 1), settings.pageSize),
    };
    regions.set(region, {
      file,
      fileOffset: entry.fileOffset,
      chunk: null,
      committed: true,
      crc32c: crc,
      crcSize: entry.dataSize,
    });
    const stored = {
      name: entry.name,
      seed: entry.seed,
      fingerprint: 'fingerprint' in entry ? entry.fingerprint : 0,
      dataSize: entry.dataSize,
      region,
    };
    const layout = 'layout' in entry ? entry.layout : undefined;
    entries.push(layout === undefined ? stored : { ...stored, layout });
  });
  return { windows, entries, dropped };
}
