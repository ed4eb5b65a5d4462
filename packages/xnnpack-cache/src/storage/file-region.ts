import type { XpwcEntry, XpwcEntryV3 } from '@memlayer/cache-format';
import type { CacheFile } from './cache-file.js';
import type { PackedRegion, StoredEntry } from './packed-storage.js';
import type { Chunk, FileRange } from './region-allocator.js';

/** Where a packed region lives in the file. */
export interface FileRegion {
  readonly file: CacheFile;
  readonly fileOffset: number;
  /** The chunk it was carved from, or null when it is part of a read-only load window. */
  readonly chunk: Chunk | null;
  /** Referenced by a commit this process made or loaded. */
  committed: boolean;
  /** CRC32C of the data, once known (from the trailer, seal(), or computed at commit). */
  crc32c: number | undefined;
  crcSize: number;
}

/**
 * A committed entry's bytes in a read-only load window, and where they are in the file: one
 * object per loaded entry serves as both its PackedRegion and its FileRegion (a warm start
 * makes one per entry: no second object and no table entry).
 */
export interface LoadedRegion extends PackedRegion, FileRegion {
  /** The load mark of the FileRegions that loaded it (see FileRegions.loadMark). */
  readonly owner: object;
  /** The cache released it: it no longer counts as a region of the file. */
  released: boolean;
}

function loadedBy(region: PackedRegion, mark: object): region is LoadedRegion {
  return (region as Partial<LoadedRegion>).owner === mark;
}

/**
 * The file regions of one storage: regions carved for new packs in a map, loaded regions
 * recognised by the mark they carry (see LoadedRegion); a region loaded by another storage,
 * or before clear(), carries another mark and is not one of them.
 */
export class FileRegions {
  readonly #carved = new Map<PackedRegion, FileRegion>();
  /** Mark of the current load; replaced by clear(), so older loaded regions stop counting. */
  #loadMark: object = {};

  /** The owner mark to give regions loaded now. */
  get loadMark(): object {
    return this.#loadMark;
  }

  get(region: PackedRegion): FileRegion | undefined {
    if (loadedBy(region, this.#loadMark)) return region.released ? undefined : region;
    return this.#carved.get(region);
  }

  has(region: PackedRegion): boolean {
    return this.get(region) !== undefined;
  }

  /** Registers a region carved for a new pack (loaded regions register themselves). */
  set(region: PackedRegion, file: FileRegion): this {
    this.#carved.set(region, file);
    return this;
  }

  delete(region: PackedRegion): void {
    if (loadedBy(region, this.#loadMark)) region.released = true;
    else this.#carved.delete(region);
  }

  /** Regions carved for new packs and not released (committed or not). */
  get carvedCount(): number {
    return this.#carved.size;
  }

  /** Page-rounded bytes of carved regions not yet committed (loaded ones always are). */
  unsavedBytes(): number {
    let bytes = 0;
    for (const [region, file] of this.#carved) if (!file.committed) bytes += region.reservedBytes;
    return bytes;
  }

  /** The file ranges of carved regions of `file` not yet committed. */
  unsavedRanges(file: CacheFile): FileRange[] {
    const ranges: FileRange[] = [];
    for (const [region, entry] of this.#carved) {
      if (entry.committed || entry.file !== file) continue;
      ranges.push({ start: entry.fileOffset, end: entry.fileOffset + region.reservedBytes });
    }
    return ranges;
  }

  clear(): void {
    this.#carved.clear();
    this.#loadMark = {};
  }
}

/** A committed entry as a v3 entry (v2 entries have no CRC: 0 is written only to v2 files). */
export function withChecks(entry: XpwcEntry): XpwcEntryV3 {
  return 'crc32c' in entry ? entry : { ...entry, fingerprint: 0, crc32c: 0 };
}

/** The index entry for a stored entry placed at `fileOffset`. */
export function indexEntryOf(stored: StoredEntry, fileOffset: number, crc32c: number): XpwcEntryV3 {
  const entry = {
    name: stored.name,
    fileOffset,
    dataSize: stored.dataSize,
    seed: stored.seed,
    fingerprint: stored.fingerprint,
    crc32c,
  };
  return stored.layout === undefined ? entry : { ...entry, layout: stored.layout };
}

/** Whether the committed entry holds the same bytes as `stored` (size, seed, CRC, packer). */
export function sameData(committed: XpwcEntry, stored: StoredEntry, crc: number): boolean {
  return (
    committed.dataSize === stored.dataSize &&
    committed.seed === stored.seed &&
    'crc32c' in committed &&
    committed.crc32c === crc &&
    committed.fingerprint === stored.fingerprint
  );
}
