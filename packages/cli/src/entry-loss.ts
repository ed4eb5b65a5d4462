import {
  type CommittedTrailer,
  decodeHeader,
  isXpwcFormatError,
  MAX_FOOTER_SIZE,
  readFooter,
  readTrailer,
  type TrailerV2,
  V3_HEADER_READ_SIZE,
  type XpwcFormatError,
} from '@memlayer/cache-format';
import { type CacheFileReader, openCacheFile } from './cache-file.js';

/** Entries a cache file committed that no reader gets back. */
export interface EntryLoss {
  /** Entries readers still get: ExecuTorch's loader for v2, the newest readable commit for v3. */
  readonly readable: number;
  /** Entries the file committed, when that is known (a v2 footer's entry_count). */
  readonly claimed: number | null;
  /** What was lost, where, and what readers get instead. */
  readonly message: string;
}

/**
 * findEntryLoss on the file at `location` (`path` is how the user named it). Null too when
 * the file cannot be read as a cache: the caller reports that its own way.
 */
export function entryLossAt(path: string, location: string): EntryLoss | null {
  const file = openCacheFile(path, location);
  try {
    return findEntryLoss(file);
  } catch (error) {
    if (isXpwcFormatError(error)) return null;
    throw error;
  } finally {
    file.close();
  }
}

/** Entries lost as a count, or null when the file does not say how many it committed. */
export function lostCount(loss: EntryLoss): number | null {
  return loss.claimed === null ? null : loss.claimed - loss.readable;
}

/**
 * What a lenient read leaves behind: a v2 index shorter than its footer's entry_count or
 * with bytes after the entries it counts (ExecuTorch's loader reads the rest and ignores
 * those), or a v3 commit whose trailer is cut off or fails its checks (readers fall back to
 * an older commit, or to none). Null when every committed entry is readable. Throws
 * XpwcFormatError when the file cannot be read at all.
 */
function findEntryLoss(file: CacheFileReader): EntryLoss | null {
  const read = (offset: number, length: number) => file.read(offset, length);
  try {
    const { trailer, commit } = readTrailer(read, file.size, { lenient: true });
    if (commit !== null) return lostCommits(commit);
    return trailer.version === 2 ? lostV2Entries(file, trailer) : null;
  } catch (error) {
    if (!isXpwcFormatError(error) || error.code !== 'ERR_XPWC_NO_COMMIT') throw error;
    return lostEveryCommit(file, error);
  }
}

function lostV2Entries(file: CacheFileReader, trailer: TrailerV2): EntryLoss | null {
  const readable = trailer.columns.length;
  const tailLength = Math.min(file.size, MAX_FOOTER_SIZE);
  const footer = readFooter(file.read(file.size - tailLength, tailLength), file.size, {
    lenient: true,
  });
  for (const issue of trailer.tolerated) {
    if (issue.code === 'ERR_XPWC_TRUNCATED') {
      return {
        readable,
        claimed: footer.entryCount,
        message: `the footer claims ${footer.entryCount} entries but the index ends after ${readable} (byte ${issue.offset}): ${footer.entryCount - readable} are lost; ExecuTorch would still load the ${readable} readable ones`,
      };
    }
    if (issue.code === 'ERR_XPWC_TRAILING_BYTES') {
      return {
        readable,
        claimed: null,
        message: `the index holds ${footer.footerOffset - issue.offset} bytes after the ${entries(readable)} the footer counts (byte ${issue.offset}): the footer's count is short and the entries written there are lost; ExecuTorch would still load the ${readable} it counts`,
      };
    }
  }
  return null;
}

/** A slot newer than the commit in use whose trailer could not be read: its entries are lost. */
function lostCommits(commit: CommittedTrailer): EntryLoss | null {
  if (commit.skipped.length === 0) return null;
  const readable = commit.trailer.columns.length;
  const lost = commit.skipped.map(
    (skip) =>
      `commit slot ${skip.slotIndex} (generation ${skip.generation}) names a trailer that cannot be read (${skip.error.code}: ${skip.error.message})`,
  );
  return {
    readable,
    claimed: null,
    message: `${lost.join('; ')}: the entries committed there are lost; readers use generation ${commit.slot.generation} with ${entries(readable)}`,
  };
}

/** A v3 file none of whose commits can be read; a file that never committed lost nothing. */
function lostEveryCommit(file: CacheFileReader, error: XpwcFormatError): EntryLoss | null {
  const header = decodeHeader(file.read(0, V3_HEADER_READ_SIZE));
  if (header.slots.every((slot) => slot.status === 'empty')) return null;
  const why = isXpwcFormatError(error.cause) ? error.cause : error;
  return {
    readable: 0,
    claimed: null,
    message: `no commit can be read (${why.code}: ${why.message}): every committed entry is lost`,
  };
}

function entries(count: number): string {
  return `${count} ${count === 1 ? 'entry' : 'entries'}`;
}
