import { alignUp, crc32cOf, type XpwcEntry, type XpwcEntryV3 } from '@memlayer/cache-format';
import type { Mapping } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import type { FileRegions, LoadedRegion } from './file-region.js';
import type { VerifyMode } from './file-storage-options.js';
import { type CommittedIndex, dataStartOf } from './index-io.js';
import { entryBytes, type MappedEntries, mapEntriesInWindows } from './load-windows.js';
import type { LoadedEntries, LoadedEntryFields, StoredEntry } from './packed-storage.js';
import { emitCacheWarning } from './warnings.js';

export interface LoadSettings {
  readonly verify: VerifyMode;
  readonly loadWindowBytes: number;
  readonly pageSize: number;
}

/**
 * The committed entries of a cache file over read-only load windows. An entry's region (a
 * LoadedRegion marked as the loading FileRegions' own) and its byte view are made when the
 * entry is first asked for, so a start that looks entries up but reads none makes neither.
 */
export class LoadedEntrySet implements LoadedEntries {
  readonly windows: Mapping[];
  /** Entries left out: unaligned, too large to map, or (verify 'full') failing their CRC. */
  readonly dropped: number;
  readonly #file: CacheFile;
  readonly #mapped: MappedEntries;
  /** The kept entries, and the window of each. */
  readonly #entries: readonly XpwcEntry[];
  readonly #windowOf: Int32Array;
  readonly #regions: Array<LoadedRegion | undefined>;
  readonly #pageSize: number;
  readonly #owner: object;

  constructor(
    file: CacheFile,
    mapped: MappedEntries,
    entries: readonly XpwcEntry[],
    windowOf: Int32Array,
    dropped: number,
    pageSize: number,
    owner: object,
  ) {
    this.windows = mapped.windows;
    this.dropped = dropped;
    this.#file = file;
    this.#mapped = mapped;
    this.#entries = entries;
    this.#windowOf = windowOf;
    this.#regions = new Array(entries.length);
    this.#pageSize = pageSize;
    this.#owner = owner;
  }

  get length(): number {
    return this.#entries.length;
  }

  fields(i: number): LoadedEntryFields {
    return this.#entries[i] as XpwcEntry;
  }

  region(i: number): LoadedRegion {
    const made = this.#regions[i];
    if (made !== undefined) return made;
    const entry = this.#entries[i] as XpwcEntry;
    const dataSize = entry.dataSize;
    const fileOffset = entry.fileOffset;
    // One literal shape for every loaded entry (no constructor: cheap before the JIT runs).
    const region: LoadedRegion = {
      bytes: entryBytes(this.#mapped, this.#windowOf[i] as number, fileOffset, dataSize),
      reservedBytes: alignUp(dataSize > 0 ? dataSize : 1, this.#pageSize),
      file: this.#file,
      fileOffset,
      chunk: null,
      committed: true,
      // A v2 entry has no crc32c: it reads as undefined.
      crc32c: (entry as Partial<XpwcEntryV3>).crc32c,
      crcSize: dataSize,
      owner: this.#owner,
      released: false,
    };
    this.#regions[i] = region;
    return region;
  }
}

/**
 * Maps the committed entries of `file` in load windows and presents the servable ones
 * (with verify 'full', those whose bytes match their CRC32C) as a LoadedEntrySet.
 */
export function loadCommittedEntries(
  file: CacheFile,
  index: CommittedIndex,
  settings: LoadSettings,
  regions: FileRegions,
): LoadedEntrySet {
  const list = index.listed;
  const mapped = mapEntriesInWindows(
    file,
    list,
    dataStartOf(index.version),
    settings.loadWindowBytes,
  );
  const windowOf = mapped.windowOf;
  const verifyAll = settings.verify === 'full';
  let servable = 0;
  for (let i = 0; i < windowOf.length; i++) if ((windowOf[i] as number) >= 0) servable++;
  // The usual load keeps every entry as the index lists it: no second list is made.
  if (servable === list.length && !verifyAll) {
    return new LoadedEntrySet(file, mapped, list, windowOf, 0, settings.pageSize, regions.loadMark);
  }
  const kept: XpwcEntry[] = [];
  const keptWindows: number[] = [];
  for (let i = 0; i < list.length; i++) {
    const window = windowOf[i] as number;
    // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
    if (window < 0) continue;
    const entry = list[i] as XpwcEntry;
    const crc = (entry as Partial<XpwcEntryV3>).crc32c;
    if (verifyAll && crc !== undefined) {
      const bytes = entryBytes(mapped, window, entry.fileOffset, entry.dataSize);
      if (crc32cOf(bytes) !== crc) {
        emitCacheWarning(
          'MEMLAYER_CACHE_CORRUPT_ENTRY',
          `Packed entry "${entry.name}" of ${file.path} fails its CRC32C; it will be repacked`,
        );
        continue;
      }
    }
    kept.push(entry);
    keptWindows.push(window);
  }
  return new LoadedEntrySet(
    file,
    mapped,
    kept,
    Int32Array.from(keptWindows),
    list.length - kept.length,
    settings.pageSize,
    regions.loadMark,
  );
}

/** Every loaded entry as a StoredEntry with its region (for PackedStorage.open). */
export function storedEntriesOf(loaded: LoadedEntries): StoredEntry[] {
  const entries: StoredEntry[] = new Array(loaded.length);
  for (let i = 0; i < loaded.length; i++) {
    const { name, seed, fingerprint, dataSize, layout } = loaded.fields(i);
    const region = loaded.region(i);
    entries[i] =
      layout === undefined
        ? { name, seed, fingerprint: fingerprint ?? 0, dataSize, region }
        : { name, seed, fingerprint: fingerprint ?? 0, dataSize, region, layout };
  }
  return entries;
}

/** A storage that loaded nothing. */
export const NO_LOADED_ENTRIES: LoadedEntries = {
  length: 0,
  fields(i) {
    throw new RangeError(`no loaded entry ${i}`);
  },
  region(i) {
    throw new RangeError(`no loaded entry ${i}`);
  },
};
