/**
 * One model of what every byte of a cache file is, shared by the cache (when to compact) and
 * the CLI (inspect, stats): "orphan bytes" means the same thing everywhere.
 */
import { alignUp, isValidPageSize } from './align.js';
import { toFileSize } from './bytes.js';
import { DEFAULT_PAGE_SIZE, V3_HEADER_SIZE } from './constants.js';
import { invalidArgument, XpwcFormatError } from './errors.js';
import { type ByteSource, type LoadedTrailer, readTrailer, trailerHistory } from './recovery.js';
import type { DecodeOptions, Trailer, TrailerV3, XpwcEntry } from './types.js';

/**
 * - `header`: the v3 header region [0, V3_HEADER_SIZE).
 * - `live-data`: the `dataSize` bytes of an entry of the live trailer (the last entry of a
 *   duplicated name, as readers use it).
 * - `live-padding`: the rest of that entry's reservation: its data rounded up to the page
 *   size, at least one page (what a writer reserves), up to index_start.
 * - `live-trailer`: the trailer readers use (v3: the committed one).
 * - `pending`: regions the caller declares in use but not yet committed (a writer's own).
 * - orphans, which compaction reclaims:
 *   - `old-trailer`: an earlier committed trailer (from `trailerHistory`);
 *   - `superseded`: any other byte before the live trailer (superseded packs, shadowed
 *     duplicates, trailers not in the history, gaps);
 *   - `uncommitted-tail`: bytes after the live trailer (an interrupted or uncommitted save).
 */
export type FileRegionKind =
  | 'header'
  | 'live-data'
  | 'live-padding'
  | 'live-trailer'
  | 'pending'
  | 'old-trailer'
  | 'superseded'
  | 'uncommitted-tail';

/** The kinds that count as orphan bytes. */
export const ORPHAN_REGION_KINDS: readonly FileRegionKind[] = [
  'old-trailer',
  'superseded',
  'uncommitted-tail',
];

// Where claims overlap, the earlier kind in this list wins (a byte is counted once).
const PRIORITY: readonly FileRegionKind[] = [
  'header',
  'live-trailer',
  'live-data',
  'live-padding',
  'pending',
  'old-trailer',
  'uncommitted-tail',
  'superseded',
];

const RANK = Object.fromEntries(PRIORITY.map((kind, rank) => [kind, rank])) as Record<
  FileRegionKind,
  number
>;

export interface FileRegion {
  readonly kind: FileRegionKind;
  readonly start: number;
  readonly end: number;
  /** The entry name for live data and padding; "generation N" for old trailers; else ''. */
  readonly label: string;
}

export interface FileLayoutInput {
  readonly fileSize: number | bigint;
  /** The live trailer (from `readTrailer` / `readCommittedTrailer`). */
  readonly trailer: Trailer;
  /** The writer's page size (v3: the header's `pageSize`); default DEFAULT_PAGE_SIZE. */
  readonly pageSize?: number;
  /** Earlier committed trailers, e.g. everything `trailerHistory` yields. */
  readonly olderTrailers?: readonly {
    readonly indexStart: number;
    readonly trailerEnd: number;
    readonly generation?: number;
  }[];
  /** Byte ranges in use but not committed yet. */
  readonly pending?: readonly {
    readonly start: number;
    readonly end: number;
    readonly label?: string;
  }[];
}

export interface FileLayout {
  readonly fileSize: number;
  readonly pageSize: number;
  /** Covers [0, fileSize) in order, without gaps or overlaps; neighbours differ. */
  readonly regions: readonly FileRegion[];
  /** Bytes of each kind; they sum to `fileSize`. */
  readonly bytes: Readonly<Record<FileRegionKind, number>>;
  /** header + live data + live padding + live trailer. */
  readonly liveBytes: number;
  readonly pendingBytes: number;
  /** old trailers + superseded + uncommitted tail: what compaction would reclaim. */
  readonly orphanBytes: number;
}

interface Claim {
  readonly rank: number;
  readonly start: number;
  readonly end: number;
  readonly label: string;
}

function claimsOf(input: FileLayoutInput, fileSize: number, page: number): Claim[] {
  const { trailer } = input;
  const claims: Claim[] = [];
  const claim = (kind: FileRegionKind, start: number, end: number, label = '') => {
    if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0)) {
      throw invalidArgument(
        `describeFileLayout: ${kind} range [${start}, ${end}) is not a range of safe integers`,
      );
    }
    if (end > fileSize)
      throw invalidArgument(
        `describeFileLayout: ${kind} range [${start}, ${end}) ends past the file`,
      );
    if (end > start) claims.push({ rank: RANK[kind], start, end, label });
  };
  if (trailer.version === 3) claim('header', 0, Math.min(V3_HEADER_SIZE, fileSize));
  claim('live-trailer', trailer.indexStart, trailer.trailerEnd);
  claim('uncommitted-tail', trailer.trailerEnd, fileSize);
  const live = new Map<string, XpwcEntry>();
  const entries = trailer.entries;
  for (let i = 0; i < entries.length; i++)
    live.set((entries[i] as XpwcEntry).name, entries[i] as XpwcEntry);
  for (const e of live.values()) {
    const dataEnd = e.fileOffset + e.dataSize;
    const reserved = e.fileOffset + alignUp(Math.max(e.dataSize, 1), page);
    claim('live-data', e.fileOffset, dataEnd, e.name);
    claim('live-padding', dataEnd, Math.min(reserved, trailer.indexStart), e.name);
  }
  for (const old of input.olderTrailers ?? []) {
    const label = old.generation === undefined ? '' : `generation ${old.generation}`;
    claim('old-trailer', old.indexStart, old.trailerEnd, label);
  }
  for (const p of input.pending ?? []) claim('pending', p.start, p.end, p.label ?? '');
  claim('superseded', 0, trailer.indexStart);
  return claims;
}

export interface DescribeFileLayoutOptions {
  /**
   * false: only the byte counts (`regions` is empty), for a caller that needs no more, such
   * as a cache counting its orphan bytes at close. Default true.
   */
  readonly regions?: boolean;
}

/**
 * Accounts every byte of a cache file as header, live data (+ padding), live trailer, pending,
 * or orphan (old trailer, superseded, uncommitted tail). Pure: give it the decoded trailer and,
 * for a complete picture, the older trailers of the history.
 */
export function describeFileLayout(
  input: FileLayoutInput,
  options: DescribeFileLayoutOptions = {},
): FileLayout {
  if (input === null || typeof input !== 'object')
    throw invalidArgument('describeFileLayout: input must be an object');
  if (options === null || typeof options !== 'object')
    throw invalidArgument('describeFileLayout: options must be an object');
  const fileSize = toFileSize(input.fileSize);
  const trailer = input.trailer;
  if (trailer === null || typeof trailer !== 'object' || !Array.isArray(trailer.entries)) {
    throw invalidArgument('describeFileLayout: trailer must be a decoded trailer');
  }
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!isValidPageSize(pageSize))
    throw invalidArgument('describeFileLayout: pageSize must be a power of two');
  const claims = claimsOf(input, fileSize, pageSize);

  const bytes = Object.fromEntries(PRIORITY.map((k) => [k, 0])) as Record<FileRegionKind, number>;
  const regions: FileRegion[] = [];
  const withRegions = options.regions !== false;
  sweep(claims, fileSize, (kind, start, end, label) => {
    bytes[kind] += end - start;
    if (!withRegions) return;
    const last = regions[regions.length - 1];
    if (last !== undefined && last.kind === kind && last.label === label && last.end === start) {
      regions[regions.length - 1] = { kind, start: last.start, end, label };
    } else regions.push({ kind, start, end, label });
  });
  return {
    fileSize,
    pageSize,
    regions,
    bytes,
    liveBytes: bytes.header + bytes['live-data'] + bytes['live-padding'] + bytes['live-trailer'],
    pendingBytes: bytes.pending,
    orphanBytes: bytes['old-trailer'] + bytes.superseded + bytes['uncommitted-tail'],
  };
}

/**
 * Walks the claims' boundaries in file order; each stretch between two boundaries goes to
 * the best-ranked claim covering it (the earliest of that rank for its label), or to
 * 'superseded' when none does, and [last boundary, fileSize) to 'uncommitted-tail'.
 */
function sweep(
  claims: readonly Claim[],
  fileSize: number,
  stretch: (kind: FileRegionKind, start: number, end: number, label: string) => void,
): void {
  // An event is claim index + 1 at the claim's start, -(claim index + 1) at its end; index
  // loops and no tuple per event (a warm cache's close lays out thousands of entries).
  const events: number[] = new Array(claims.length * 2);
  for (let i = 0; i < claims.length; i++) {
    events[2 * i] = i + 1;
    events[2 * i + 1] = -(i + 1);
  }
  const positionOf = (event: number): number =>
    event > 0 ? (claims[event - 1] as Claim).start : (claims[-event - 1] as Claim).end;
  // Ends before starts at one position; claims are mostly in file order already.
  events.sort((a, b) => positionOf(a) - positionOf(b) || a - b);
  // Active claims per rank in the order they started (rarely more than one each).
  const active: number[][] = PRIORITY.map(() => []);
  let at = 0;
  for (let k = 0; k < events.length; k++) {
    const event = events[k] as number;
    const index = event > 0 ? event - 1 : -event - 1;
    const claim = claims[index] as Claim;
    const position = event > 0 ? claim.start : claim.end;
    if (position > at) {
      let rank = 0;
      while (rank < active.length && (active[rank] as number[]).length === 0) rank++;
      if (rank === active.length) {
        // Bytes no claim covers (after the trailer of a trailer-less stretch) are orphans too.
        stretch('superseded', at, position, '');
      } else {
        const owner = claims[(active[rank] as number[])[0] as number] as Claim;
        stretch(PRIORITY[rank] as FileRegionKind, at, position, owner.label);
      }
      at = position;
    }
    const list = active[claim.rank] as number[];
    if (event > 0) list.push(index);
    else list.splice(list.indexOf(index), 1);
  }
  if (at < fileSize) stretch('uncommitted-tail', at, fileSize, '');
}

export interface ReadFileLayoutOptions extends DecodeOptions {
  /** Default: the v3 header's page size, else DEFAULT_PAGE_SIZE. */
  readonly pageSize?: number;
  readonly pending?: FileLayoutInput['pending'];
}

export interface FileLayoutReport {
  readonly layout: FileLayout;
  /** The live trailer and, for v3, how its commit was found (as `readTrailer` returns it). */
  readonly loaded: LoadedTrailer;
  /** Where the back-pointer chain broke (older trailers past it count as superseded); null when intact. */
  readonly historyError: XpwcFormatError | null;
}

/**
 * Reads the live trailer (`readTrailer`), walks its history (`trailerHistory`) and lays the
 * file out (`describeFileLayout`): the one call the cache and the CLI share. Throws what
 * `readTrailer` throws; a broken history is reported, not thrown.
 */
export function readFileLayout(
  source: ByteSource,
  fileSize: number | bigint,
  options: ReadFileLayoutOptions = {},
): FileLayoutReport {
  const loaded = readTrailer(source, fileSize, options);
  const olderTrailers: TrailerV3[] = [];
  let historyError: XpwcFormatError | null = null;
  if (loaded.trailer.version === 3) {
    try {
      for (const old of trailerHistory(source, loaded.trailer)) olderTrailers.push(old);
    } catch (e) {
      if (!(e instanceof XpwcFormatError)) throw e;
      historyError = e;
    }
  }
  const layout = describeFileLayout({
    fileSize,
    trailer: loaded.trailer,
    pageSize: options.pageSize ?? loaded.commit?.header.pageSize ?? DEFAULT_PAGE_SIZE,
    olderTrailers,
    ...(options.pending === undefined ? {} : { pending: options.pending }),
  });
  return { layout, loaded, historyError };
}
