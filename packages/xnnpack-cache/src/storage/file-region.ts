import type { XpwcEntry, XpwcEntryV3 } from '@memlayer/cache-format';
import type { CacheFile } from './cache-file.js';
import type { StoredEntry } from './packed-storage.js';
import type { Chunk } from './region-allocator.js';

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
