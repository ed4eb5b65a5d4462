import {
  alignUp,
  type CommittedTrailer,
  findDuplicateNames,
  lintTrailer,
  readTrailer,
  type Trailer,
  trailerHistory,
  V3_HEADER_SIZE,
  type XpwcEntry,
  XpwcFormatError,
  type XpwcWarning,
} from '@memlayer/cache-format';
import type { CacheFileReader } from './cache-file.js';

export type SegmentKind =
  | 'header'
  | 'live'
  | 'padding'
  | 'trailer'
  | 'old-trailer'
  | 'orphan'
  | 'dead-tail';

/** A byte range of the file and what occupies it. */
export interface Segment {
  kind: SegmentKind;
  start: number;
  end: number;
  label: string;
}

export interface EntryRow {
  name: string;
  offset: number;
  size: number;
  seed: number;
  fingerprint: number | null;
  crc32c: number | null;
}

/** Everything inspect, stats and verify report about a cache file. */
export interface CacheReport {
  path: string;
  fileSize: number;
  version: 2 | 3;
  identity: string | null;
  /** v3: from the header; v2: the largest power of two every offset is aligned to. */
  pageSize: number | null;
  pageSizeSource: 'header' | 'guessed from offsets' | 'offsets are unaligned';
  generation: number | null;
  entries: EntryRow[];
  liveBytes: number;
  paddingBytes: number;
  headerBytes: number;
  trailerBytes: number;
  oldTrailerBytes: number;
  orphanBytes: number;
  deadTailBytes: number;
  history: { generation: number; indexStart: number; trailerEnd: number }[];
  historyError: string | null;
  segments: Segment[];
  warnings: XpwcWarning[];
  duplicateNames: string[];
  commit: {
    fellBack: boolean;
    skipped: { slot: number; generation: number; code: string; message: string }[];
  } | null;
}

const CANDIDATE_PAGE_SIZES = [65536, 16384, 4096];

/** Reads and decodes the live trailer, then lays out the file. Throws XpwcFormatError. */
export function analyzeCache(file: CacheFileReader): CacheReport {
  const { trailer, commit } = readTrailer((offset, length) => file.read(offset, length), file.size);
  const pageInfo = pageSizeOf(trailer, commit);
  const page = pageInfo.pageSize ?? 1;
  const history: CacheReport['history'] = [];
  let historyError: string | null = null;
  if (trailer.version === 3) {
    try {
      for (const old of trailerHistory((offset, length) => file.read(offset, length), trailer)) {
        history.push({
          generation: old.generation,
          indexStart: old.indexStart,
          trailerEnd: old.trailerEnd,
        });
      }
    } catch (error) {
      if (!(error instanceof XpwcFormatError)) throw error;
      historyError = `${error.code} at ${error.offset}: ${error.message}`;
    }
  }
  const segments = layOut(file.size, trailer, page, history, commit?.deadTailBytes ?? 0);
  const bytesOf = (kind: SegmentKind) =>
    segments
      .filter((segment) => segment.kind === kind)
      .reduce((sum, s) => sum + s.end - s.start, 0);
  return {
    path: file.path,
    fileSize: file.size,
    version: trailer.version,
    identity: trailer.identity,
    pageSize: pageInfo.pageSize,
    pageSizeSource: pageInfo.source,
    generation: trailer.version === 3 ? trailer.generation : null,
    entries: trailer.entries.map(toRow),
    liveBytes: bytesOf('live'),
    paddingBytes: bytesOf('padding'),
    headerBytes: bytesOf('header'),
    trailerBytes: bytesOf('trailer'),
    oldTrailerBytes: bytesOf('old-trailer'),
    orphanBytes: bytesOf('orphan'),
    deadTailBytes: bytesOf('dead-tail'),
    history,
    historyError,
    segments,
    warnings: lintTrailer(trailer, pageInfo.pageSize ?? 4096),
    duplicateNames: findDuplicateNames(trailer.entries).map((duplicate) => duplicate.name),
    commit: commit && {
      fellBack: commit.fellBack,
      skipped: commit.skipped.map((skip) => ({
        slot: skip.slotIndex,
        generation: skip.generation,
        code: skip.error.code,
        message: skip.error.message,
      })),
    },
  };
}

function toRow(entry: XpwcEntry): EntryRow {
  const v3 = 'crc32c' in entry;
  return {
    name: entry.name,
    offset: entry.fileOffset,
    size: entry.dataSize,
    seed: entry.seed,
    fingerprint: v3 ? entry.fingerprint : null,
    crc32c: v3 ? entry.crc32c : null,
  };
}

function pageSizeOf(
  trailer: Trailer,
  commit: CommittedTrailer | null,
): { pageSize: number | null; source: CacheReport['pageSizeSource'] } {
  if (commit) return { pageSize: commit.header.pageSize, source: 'header' };
  for (const candidate of CANDIDATE_PAGE_SIZES) {
    if (trailer.entries.every((entry) => entry.fileOffset % candidate === 0)) {
      return { pageSize: candidate, source: 'guessed from offsets' };
    }
  }
  return { pageSize: null, source: 'offsets are unaligned' };
}

/**
 * Splits [0, fileSize) into segments: header, live data (+ page padding), the live
 * trailer, older trailers, a dead tail after the commit, and orphans (everything else:
 * superseded packs, bytes no live entry references).
 */
function layOut(
  fileSize: number,
  trailer: Trailer,
  page: number,
  history: CacheReport['history'],
  deadTail: number,
): Segment[] {
  const claimed: Segment[] = [];
  if (trailer.version === 3)
    claimed.push({ kind: 'header', start: 0, end: V3_HEADER_SIZE, label: 'header' });
  const live = new Map<string, XpwcEntry>();
  for (const entry of trailer.entries) live.set(entry.name, entry);
  for (const entry of live.values()) {
    const end = entry.fileOffset + entry.dataSize;
    claimed.push({ kind: 'live', start: entry.fileOffset, end, label: entry.name });
    const padded = Math.min(alignUp(end, page), trailer.indexStart);
    if (padded > end)
      claimed.push({ kind: 'padding', start: end, end: padded, label: `${entry.name} padding` });
  }
  claimed.push({
    kind: 'trailer',
    start: trailer.indexStart,
    end: trailer.trailerEnd,
    label: 'trailer',
  });
  for (const old of history) {
    claimed.push({
      kind: 'old-trailer',
      start: old.indexStart,
      end: old.trailerEnd,
      label: `trailer gen ${old.generation}`,
    });
  }
  if (deadTail > 0)
    claimed.push({
      kind: 'dead-tail',
      start: fileSize - deadTail,
      end: fileSize,
      label: 'uncommitted tail',
    });
  claimed.sort((a, b) => a.start - b.start || a.end - b.end);
  const segments: Segment[] = [];
  let cursor = 0;
  for (const segment of claimed) {
    // Overlapping claims (duplicate names sharing data) are clipped, never counted twice.
    const start = Math.max(segment.start, cursor);
    if (start > cursor)
      segments.push({ kind: 'orphan', start: cursor, end: start, label: 'orphan' });
    if (segment.end > start) segments.push({ ...segment, start });
    cursor = Math.max(cursor, segment.end);
  }
  if (cursor < fileSize)
    segments.push({ kind: 'orphan', start: cursor, end: fileSize, label: 'orphan' });
  return segments;
}
