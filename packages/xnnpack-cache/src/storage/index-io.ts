import {
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  decodeHeader,
  decodeTrailer,
  type EntryColumns,
  encodeCommitSlot,
  encodeTrailer,
  entriesByName,
  isXpwcFormatError,
  planCommit,
  readCommittedTrailer,
  readTrailer,
  type Trailer,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  type XpwcEntry,
  type XpwcEntryV2,
  type XpwcEntryV3,
} from '@memlayer/cache-format';
import type { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';

export type CacheFormat = 2 | 3;

/** The newest committed index of a cache file, as far as this process knows it. */
export interface CommittedIndex {
  readonly version: CacheFormat;
  /** One entry per name (a later duplicate wins, as ExecuTorch's loader does). */
  readonly entries: readonly XpwcEntry[];
  /**
   * The entries as the index lists them, as columns: a name may be listed twice (the later
   * one wins). Loading reads these: its table keeps the later entry of a name itself (a warm
   * start hashes each name once), and no object is made per entry.
   */
  readonly columns: EntryColumns;
  readonly indexStart: number;
  readonly trailerLength: number;
  /** v3 commit generation; 0 for v2. */
  readonly generation: number;
  /** The decoded trailer it comes from (absent for a file without a commit). */
  readonly trailer?: Trailer;
}

/** The columns of an index without entries. */
export const NO_ENTRY_COLUMNS: EntryColumns = {
  length: 0,
  names: [],
  fileOffsets: new Float64Array(0),
  dataSizes: new Float64Array(0),
  seeds: new Uint32Array(0),
  fingerprints: null,
  crc32cs: null,
  layouts: null,
};

/** First byte a data region may use: after the v3 header region, at 0 in a v2 file. */
export function dataStartOf(format: CacheFormat): number {
  return format === 3 ? V3_HEADER_SIZE : 0;
}

export function toIndex(
  trailer: ReturnType<typeof decodeTrailer>,
  generation: number,
): CommittedIndex {
  let entries: readonly XpwcEntry[] | undefined;
  return {
    version: trailer.version,
    // Made on first use: only writing and budgeting need one entry per name.
    get entries() {
      entries ??= lastOfEachName(trailer.entries);
      return entries;
    },
    columns: trailer.columns,
    indexStart: trailer.indexStart,
    trailerLength: trailer.trailerEnd - trailer.indexStart,
    generation,
    trailer,
  };
}

/**
 * The entries with one per name, a later duplicate winning at the first one's place (as
 * ExecuTorch's loader does). The usual index has no duplicate: it is returned as it is.
 */
function lastOfEachName(entries: readonly XpwcEntry[]): readonly XpwcEntry[] {
  const names = new Set<string>();
  for (let i = 0; i < entries.length; i++) names.add((entries[i] as XpwcEntry).name);
  if (names.size === entries.length) return entries;
  return [...entriesByName<XpwcEntry>(entries).values()];
}

/** The writes of one commit, in order, and the index they commit. */
export interface IndexCommit {
  /** v3: the trailer at end of file, then the commit slot; v2: the trailer only. */
  readonly writes: readonly { readonly bytes: Uint8Array; readonly position: number }[];
  readonly index: CommittedIndex;
}

/**
 * Encodes an index of `entries` (call under the file lock): the trailer appended at end of
 * file and, in v3, the commit slot that points at it (cache-format's writer protocol).
 * v2 has the trailer only: the footer at end of file is the only pointer ExecuTorch knows.
 * Null when there is nothing to write (an empty v2 index is not a valid file).
 */
export function planIndexCommit(
  file: CacheFile,
  format: CacheFormat,
  entries: readonly XpwcEntryV3[],
  identity: string,
): IndexCommit | null {
  const indexStart = file.size();
  if (format === 2) {
    if (entries.length === 0) return null;
    const v2: XpwcEntryV2[] = entries.map(({ name, fileOffset, dataSize, seed }) => ({
      name,
      fileOffset,
      dataSize,
      seed,
    }));
    const bytes = encodeTrailer(v2, { version: 2, indexStart });
    const index = toIndex(decodeTrailer(bytes, indexStart + bytes.byteLength), 0);
    return { writes: [{ bytes, position: indexStart }], index };
  }
  const read = (offset: number, length: number) => file.read(offset, length);
  const header = decodeHeader(file.read(0, V3_HEADER_READ_SIZE));
  let loaded: Parameters<typeof planCommit>[1] = null;
  try {
    loaded = readCommittedTrailer(read, indexStart, { crc32c: dataCrc32c });
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
  const slot = encodeCommitSlot(commitSlotForTrailer(bytes), plan.slotIndex);
  const index = toIndex(decodeTrailer(bytes, indexStart + bytes.byteLength), plan.generation);
  return {
    writes: [
      { bytes, position: indexStart },
      { bytes: slot, position: COMMIT_SLOT_OFFSETS[plan.slotIndex] as number },
    ],
    index,
  };
}

/** Newest committed index of `file` (under the lock), or null when there is none. */
export function readNewestIndex(file: CacheFile, identity: string): CommittedIndex | null {
  const size = file.size();
  if (size === 0) return null;
  try {
    const { trailer, commit } = readTrailer((o, l) => file.read(o, l), size, {
      expectedIdentity: identity,
      lenient: true,
      crc32c: dataCrc32c,
    });
    return toIndex(trailer, commit?.slot.generation ?? 0);
  } catch (error) {
    if (isXpwcFormatError(error)) return null;
    throw error;
  }
}
