import { alignUp, type EntryColumns } from '@memlayer/cache-format';
import type { Mapping } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';
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
 * The committed entries of a cache file over read-only load windows, read from the index's
 * columns. An entry's region (a LoadedRegion marked as the loading FileRegions' own) and
 * its byte view are made when the entry is first asked for, so a start that looks entries
 * up but reads none makes neither.
 */
export class LoadedEntrySet implements LoadedEntries {
  readonly windows: Mapping[];
  /** Entries left out: unaligned, too large to map, or (verify 'full') failing their CRC. */
  readonly dropped: number;
  /** The index's columns when every entry is kept (the usual load); else undefined. */
  readonly columns: EntryColumns | undefined;
  readonly #file: CacheFile;
  readonly #mapped: MappedEntries;
  readonly #index: EntryColumns;
  /** Index row of each kept entry; null when every entry is kept, in index order. */
  readonly #rows: Int32Array | null;
  readonly #windowOf: Int32Array;
  readonly #regions: Array<LoadedRegion | undefined>;
  readonly #pageSize: number;
  readonly #owner: object;

  constructor(
    file: CacheFile,
    mapped: MappedEntries,
    index: EntryColumns,
    rows: Int32Array | null,
    dropped: number,
    pageSize: number,
    owner: object,
  ) {
    this.windows = mapped.windows;
    this.dropped = dropped;
    this.columns = rows === null ? index : undefined;
    this.#file = file;
    this.#mapped = mapped;
    this.#index = index;
    this.#rows = rows;
    this.#windowOf = mapped.windowOf;
    this.#regions = new Array(this.length);
    this.#pageSize = pageSize;
    this.#owner = owner;
  }

  get length(): number {
    return this.#rows === null ? this.#index.length : this.#rows.length;
  }

  /** An object made per call: the cache reads `columns` when it can. */
  fields(i: number): LoadedEntryFields {
    const row = this.#rowOf(i);
    const index = this.#index;
    const name = index.names[row] as string;
    const seed = index.seeds[row] as number;
    const dataSize = index.dataSizes[row] as number;
    const fingerprint = index.fingerprints?.[row];
    const layout = index.layouts?.[row];
    if (fingerprint === undefined) return { name, seed, dataSize };
    if (layout === undefined) return { name, seed, fingerprint, dataSize };
    return { name, seed, fingerprint, dataSize, layout };
  }

  region(i: number): LoadedRegion {
    const made = this.#regions[i];
    if (made !== undefined) return made;
    const row = this.#rowOf(i);
    const index = this.#index;
    const dataSize = index.dataSizes[row] as number;
    const fileOffset = index.fileOffsets[row] as number;
    // One literal shape for every loaded entry (no constructor: cheap before the JIT runs).
    const region: LoadedRegion = {
      bytes: entryBytes(this.#mapped, this.#windowOf[row] as number, fileOffset, dataSize),
      reservedBytes: alignUp(dataSize > 0 ? dataSize : 1, this.#pageSize),
      file: this.#file,
      fileOffset,
      chunk: null,
      committed: true,
      // A v2 entry has no crc32c: it reads as undefined.
      crc32c: index.crc32cs?.[row],
      crcSize: dataSize,
      owner: this.#owner,
      released: false,
    };
    this.#regions[i] = region;
    return region;
  }

  #rowOf(i: number): number {
    return this.#rows === null ? i : (this.#rows[i] as number);
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
  const columns = index.columns;
  const count = columns.length;
  const mapped = mapEntriesInWindows(
    file,
    columns,
    count,
    dataStartOf(index.version),
    settings.loadWindowBytes,
  );
  const windowOf = mapped.windowOf;
  const verifyAll = settings.verify === 'full';
  let servable = 0;
  for (let i = 0; i < count; i++) if ((windowOf[i] as number) >= 0) servable++;
  // The usual load keeps every entry as the index lists it: no list of rows is made.
  if (servable === count && !verifyAll) {
    return new LoadedEntrySet(file, mapped, columns, null, 0, settings.pageSize, regions.loadMark);
  }
  const kept: number[] = [];
  for (let row = 0; row < count; row++) {
    const window = windowOf[row] as number;
    // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
    if (window < 0) continue;
    const crc = columns.crc32cs?.[row];
    if (verifyAll && crc !== undefined) {
      const bytes = entryBytes(
        mapped,
        window,
        columns.fileOffsets[row] as number,
        columns.dataSizes[row] as number,
      );
      if (dataCrc32c(bytes) !== crc) {
        emitCacheWarning(
          'MEMLAYER_CACHE_CORRUPT_ENTRY',
          `Packed entry "${columns.names[row]}" of ${file.path} fails its CRC32C; it will be repacked`,
        );
        continue;
      }
    }
    kept.push(row);
  }
  return new LoadedEntrySet(
    file,
    mapped,
    columns,
    Int32Array.from(kept),
    count - kept.length,
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
