import {
  type CommittedTrailer,
  DAMAGED_SLOT_STATUSES,
  describeFileLayout,
  type FileRegionKind,
  findDuplicateNames,
  lintTrailer,
  readTrailer,
  type Trailer,
  trailerHistory,
  XpwcFormatError,
  type XpwcIssue,
  type XpwcWarning,
} from '@memlayer/cache-format';
import type { CacheFileReader } from './cache-file.js';
import { type EntryRow, type RevisionSummary, revisionSummary, toRow } from './entry-rows.js';

export type { EntryRow } from './entry-rows.js';

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

/** cache-format's region kinds under the names this CLI has always printed. */
const SEGMENT_KIND: Record<FileRegionKind, SegmentKind> = {
  header: 'header',
  'live-data': 'live',
  'live-padding': 'padding',
  'live-trailer': 'trailer',
  pending: 'orphan',
  'old-trailer': 'old-trailer',
  superseded: 'orphan',
  'uncommitted-tail': 'dead-tail',
};

/** What one v3 commit slot was found to be. */
export interface SlotRow {
  slot: number;
  status: 'live' | 'standby' | 'empty' | 'corrupt' | 'torn-tail' | 'bad-trailer';
  generation: number | null;
  /** corrupt / bad-trailer: damage (a problem); torn-tail: an interrupted save (a warning). */
  damaged: boolean;
  code: string | null;
  message: string | null;
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
  /** Per XNNPACK revision, how many entries fit it (by layout, or by seed and size). */
  xnnpackRevisions: RevisionSummary[];
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
  /** v2 defects ExecuTorch's loader accepts, read past (lenient decoding); [] when clean. */
  tolerated: XpwcIssue[];
  duplicateNames: string[];
  commit: {
    fellBack: boolean;
    skipped: { slot: number; generation: number; code: string; message: string }[];
    slots: SlotRow[];
  } | null;
}

const CANDIDATE_PAGE_SIZES = [65536, 16384, 4096];

/**
 * Reads and decodes the live trailer (v2 leniently, as ExecuTorch's loader does), then
 * accounts every byte with cache-format's file-layout model. Throws XpwcFormatError.
 */
export function analyzeCache(file: CacheFileReader): CacheReport {
  const read = (offset: number, length: number) => file.read(offset, length);
  const { trailer, commit } = readTrailer(read, file.size, { lenient: true });
  const pageInfo = pageSizeOf(trailer, commit);
  const history: CacheReport['history'] = [];
  let historyError: string | null = null;
  if (trailer.version === 3) {
    try {
      for (const old of trailerHistory(read, trailer)) {
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
  const layout = describeFileLayout({
    fileSize: file.size,
    trailer,
    pageSize: pageInfo.pageSize ?? 1,
    olderTrailers: history,
  });
  const segments = layout.regions.map((region) => ({
    kind: SEGMENT_KIND[region.kind],
    start: region.start,
    end: region.end,
    label: labelOf(region.kind, region.label),
  }));
  const bytes = layout.bytes;
  const entries = trailer.entries.map(toRow);
  return {
    path: file.path,
    fileSize: file.size,
    version: trailer.version,
    identity: trailer.identity,
    pageSize: pageInfo.pageSize,
    pageSizeSource: pageInfo.source,
    generation: trailer.version === 3 ? trailer.generation : null,
    entries,
    xnnpackRevisions: revisionSummary(entries),
    liveBytes: bytes['live-data'],
    paddingBytes: bytes['live-padding'],
    headerBytes: bytes.header,
    trailerBytes: bytes['live-trailer'],
    oldTrailerBytes: bytes['old-trailer'],
    orphanBytes: bytes.superseded + bytes.pending,
    deadTailBytes: bytes['uncommitted-tail'],
    history,
    historyError,
    segments,
    warnings: lintTrailer(trailer, pageInfo.pageSize ?? 4096),
    tolerated: trailer.version === 2 ? [...trailer.tolerated] : [],
    duplicateNames: findDuplicateNames(trailer.entries).map((duplicate) => duplicate.name),
    commit: commit && {
      fellBack: commit.fellBack,
      skipped: commit.skipped.map((skip) => ({
        slot: skip.slotIndex,
        generation: skip.generation,
        code: skip.error.code,
        message: skip.error.message,
      })),
      slots: commit.slotReports.map((slot) => ({
        slot: slot.index,
        status: slot.status,
        generation: slot.generation,
        damaged: DAMAGED_SLOT_STATUSES.includes(slot.status),
        code: slot.error?.code ?? null,
        message: slot.error?.message ?? null,
      })),
    },
  };
}

function labelOf(kind: FileRegionKind, label: string): string {
  if (kind === 'live-padding') return `${label} padding`;
  if (kind === 'old-trailer') return label === '' ? 'older trailer' : `trailer ${label}`;
  if (label !== '') return label;
  return (
    { header: 'header', 'live-trailer': 'trailer', 'uncommitted-tail': 'uncommitted tail' }[
      kind as 'header'
    ] ?? 'orphan'
  );
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
