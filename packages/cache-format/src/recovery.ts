import { toFileSize } from './bytes.js';
import {
  MAX_FOOTER_SIZE,
  V2_FOOTER_SIZE,
  V3_FOOTER_SIZE,
  V3_HEADER_FIXED_SIZE,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  V3_MIN_TRAILER_END,
  VERSION_3,
} from './constants.js';
import { isXpwcFormatError, XpwcFormatError } from './errors.js';
import { readFooter, V2_FOOTER_FIELDS } from './footer.js';
import {
  type CommitSlot,
  decodeHeader,
  isV3Header,
  orderCommitSlots,
  type SlotIndex,
  type V3Header,
} from './header.js';
import { MAX_TRAILER_BYTES } from './limits.js';
import { type CommitSlotReport, type CommitSlotStatus, reportSlots } from './slot-report.js';
import { decodeTrailer } from './trailer.js';
import { checkDecodeOptions } from './trailer-checks.js';
import type { DecodeOptions, Trailer, TrailerV3 } from './types.js';

/** Reads `length` bytes at absolute `offset`. May return a longer view (the rest is ignored). */
export type ReadAt = (offset: number, length: number) => Uint8Array;
/** Same, possibly asynchronous. */
export type ReadAtAsync = (offset: number, length: number) => Uint8Array | Promise<Uint8Array>;
/** The whole file, or a way to read byte ranges of it. */
export type ByteSource = Uint8Array | ReadAt;
export type ByteSourceAsync = Uint8Array | ReadAtAsync;

/** A slot whose trailer could not be used, and why. */
export interface SkippedCommit {
  readonly slotIndex: SlotIndex;
  readonly generation: number;
  readonly error: XpwcFormatError;
}

/** The newest usable committed v3 trailer and how it was found. */
export interface CommittedTrailer {
  readonly trailer: TrailerV3;
  /** The slot that names `trailer`. */
  readonly slotIndex: SlotIndex;
  readonly slot: CommitSlot;
  readonly header: V3Header;
  /** True when a newer valid slot named a trailer that could not be used (see `skipped`). */
  readonly fellBack: boolean;
  readonly skipped: readonly SkippedCommit[];
  /**
   * Bytes after the trailer's end: 0 after a clean commit; more when a later write (data,
   * a torn or uncommitted trailer) did not commit. A writer appends after them.
   */
  readonly deadTailBytes: number;
  /**
   * What each slot was found to be (indexed by slot): tells a corrupt slot (damage: report it)
   * from an empty one or one whose trailer runs past the end of the file (an interrupted save).
   */
  readonly slotReports: readonly [CommitSlotReport, CommitSlotReport];
}

/** Result of `readTrailer`: the live trailer of any readable version. */
export interface LoadedTrailer {
  readonly trailer: Trailer;
  /** v3: how the commit slot led to the trailer; v2: null (the footer at EOF is the pointer). */
  readonly commit: CommittedTrailer | null;
}

interface ReadRequest {
  readonly offset: number;
  readonly length: number;
}

type Steps<T> = Generator<ReadRequest, T, Uint8Array>;

function checkRead(result: unknown, req: ReadRequest): Uint8Array {
  if (!(result instanceof Uint8Array)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'read callback must return a Uint8Array',
    );
  }
  if (result.length < req.length) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `read of ${req.length} bytes at ${req.offset} returned ${result.length} (file shorter than fileSize?)`,
      req.offset + result.length,
    );
  }
  return result.length === req.length ? result : result.subarray(0, req.length);
}

function readSync(source: ByteSource, req: ReadRequest): Uint8Array {
  if (source instanceof Uint8Array) {
    return checkRead(source.subarray(req.offset, req.offset + req.length), req);
  }
  return checkRead(source(req.offset, req.length), req);
}

function runSync<T>(source: ByteSource, steps: Steps<T>): T {
  let r = steps.next();
  while (!r.done) r = steps.next(readSync(source, r.value));
  return r.value;
}

async function runAsync<T>(source: ByteSourceAsync, steps: Steps<T>): Promise<T> {
  let r = steps.next();
  while (!r.done) {
    const req = r.value;
    const got =
      source instanceof Uint8Array
        ? source.subarray(req.offset, req.offset + req.length)
        : await source(req.offset, req.length);
    r = steps.next(checkRead(got, req));
  }
  return r.value;
}

const encoder = new TextEncoder();
function utf8Length(value: string): number {
  return encoder.encode(value).length;
}

function checkSource(source: unknown): void {
  if (!(source instanceof Uint8Array) && typeof source !== 'function') {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'source must be a Uint8Array or a (offset, length) => Uint8Array function',
    );
  }
}

function* committedTrailerSteps(size: number, options: DecodeOptions): Steps<CommittedTrailer> {
  if (size < V3_HEADER_READ_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `file is ${size} bytes, shorter than a v3 header (${V3_HEADER_READ_SIZE})`,
      0,
    );
  }
  const header = decodeHeader(yield { offset: 0, length: V3_HEADER_READ_SIZE });
  const candidates = orderCommitSlots(header.slots);
  const skipped: SkippedCommit[] = [];
  const outcomes = new Map<
    SlotIndex,
    { status: CommitSlotStatus; error: XpwcFormatError | null }
  >();
  for (const { index, slot } of candidates) {
    const end = slot.trailerOffset + slot.trailerLength;
    const skip = (error: XpwcFormatError, status: CommitSlotStatus = 'bad-trailer') => {
      skipped.push({ slotIndex: index, generation: slot.generation, error });
      outcomes.set(index, { status, error });
    };
    if (end > size) {
      skip(
        new XpwcFormatError(
          'ERR_XPWC_TRUNCATED',
          `slot ${index} names a trailer ending at ${end}, past the end of the file (${size})`,
          size,
        ),
        'torn-tail',
      );
      continue;
    }
    let trailer: Trailer;
    try {
      const bytes = yield { offset: slot.trailerOffset, length: slot.trailerLength };
      // The identity is judged below, per slot; only the reader's CRC32C goes down.
      const { crc32c } = options;
      trailer = decodeTrailer(bytes, end, crc32c === undefined ? {} : { crc32c });
      if (trailer.version !== VERSION_3) {
        throw new XpwcFormatError(
          'ERR_XPWC_BAD_FIELD',
          `slot ${index} names a v2 trailer`,
          end - V2_FOOTER_SIZE + V2_FOOTER_FIELDS.version,
        );
      }
      if (trailer.indexStart !== slot.trailerOffset) {
        throw new XpwcFormatError(
          'ERR_XPWC_BAD_FIELD',
          `trailer index_start ${trailer.indexStart} is not the slot's offset ${slot.trailerOffset}`,
          end - V3_FOOTER_SIZE,
        );
      }
      if (trailer.generation !== slot.generation || trailer.trailerCrc32c !== slot.trailerCrc32c) {
        throw new XpwcFormatError(
          'ERR_XPWC_BAD_FIELD',
          `trailer (generation ${trailer.generation}) is not the one slot ${index} committed (generation ${slot.generation})`,
          end - V3_FOOTER_SIZE,
        );
      }
    } catch (e) {
      // Only format errors mean "this commit is unusable"; an I/O error of the caller's read
      // callback propagates unchanged.
      if (!isXpwcFormatError(e)) throw e;
      skip(e);
      continue;
    }
    // A wrong identity rejects the whole cache: older commits are not a fallback for it.
    if (options.expectedIdentity !== undefined && trailer.identity !== options.expectedIdentity) {
      throw new XpwcFormatError(
        'ERR_XPWC_IDENTITY_MISMATCH',
        `cache identity ${JSON.stringify(trailer.identity)} is not the expected ${JSON.stringify(options.expectedIdentity)}`,
        end - V3_FOOTER_SIZE - utf8Length(trailer.identity),
      );
    }
    outcomes.set(index, { status: 'live', error: null });
    return {
      trailer,
      slotIndex: index,
      slot,
      header,
      fellBack: skipped.length > 0,
      skipped,
      deadTailBytes: size - end,
      slotReports: reportSlots(header.slots, outcomes),
    };
  }
  const states = header.slots
    .map(
      (s) =>
        `slot ${s.index}: ${s.status === 'corrupt' ? `corrupt (${s.error.message})` : s.status}`,
    )
    .concat(skipped.map((s) => `generation ${s.generation}: ${s.error.message}`))
    .join('; ');
  throw new XpwcFormatError(
    'ERR_XPWC_NO_COMMIT',
    `no usable committed trailer (${states})`,
    0,
    skipped.length > 0 ? { cause: skipped[0]?.error } : undefined,
  );
}

function* anyTrailerSteps(size: number, options: DecodeOptions): Steps<LoadedTrailer> {
  if (size >= V3_HEADER_READ_SIZE) {
    const start = yield { offset: 0, length: V3_HEADER_FIXED_SIZE };
    if (isV3Header(start)) {
      const commit = yield* committedTrailerSteps(size, options);
      return { trailer: commit.trailer, commit };
    }
  }
  const tailLength = Math.min(size, MAX_FOOTER_SIZE);
  const footer = readFooter(yield { offset: size - tailLength, length: tailLength }, size, options);
  if (footer.version === VERSION_3) {
    // A v3 footer but no valid v3 header: report what is wrong with the header.
    decodeHeader(yield { offset: 0, length: Math.min(size, V3_HEADER_READ_SIZE) });
    throw new XpwcFormatError('ERR_XPWC_BAD_MAGIC', 'v3 footer without a v3 header', 0);
  }
  const length = size - footer.indexStart;
  if (length > MAX_TRAILER_BYTES) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `trailer is ${length} bytes, more than MAX_TRAILER_BYTES (${MAX_TRAILER_BYTES})`,
      footer.indexStart,
    );
  }
  const trailer = decodeTrailer(yield { offset: footer.indexStart, length }, size, options);
  return { trailer, commit: null };
}

/**
 * Finds the newest committed trailer of a v3 file through its commit slots: the valid slot with
 * the highest generation whose trailer is intact (CRC) and is the one the slot committed
 * (same offset, generation and CRC); if that trailer is unusable, the other slot's. The bytes
 * at the end of the file are not trusted: a torn trailer there (a crash before its commit) is
 * ignored. Throws `ERR_XPWC_NO_COMMIT` when no slot leads to a usable trailer, and
 * `ERR_XPWC_IDENTITY_MISMATCH` (without falling back) when the newest usable trailer has
 * another identity than `options.expectedIdentity`.
 *
 * `source` is the whole file or a read callback; exceptions of the callback propagate as they
 * are. Reads are bounded: the header (1056 bytes) and at most MAX_TRAILER_BYTES per slot.
 */
export function readCommittedTrailer(
  source: ByteSource,
  fileSize: number | bigint,
  options: DecodeOptions = {},
): CommittedTrailer {
  checkSource(source);
  return runSync(source, committedTrailerSteps(toFileSize(fileSize), checkDecodeOptions(options)));
}

/** `readCommittedTrailer` with an asynchronous read callback. */
export async function readCommittedTrailerAsync(
  source: ByteSourceAsync,
  fileSize: number | bigint,
  options: DecodeOptions = {},
): Promise<CommittedTrailer> {
  checkSource(source);
  return runAsync(source, committedTrailerSteps(toFileSize(fileSize), checkDecodeOptions(options)));
}

/**
 * Reads the live trailer of a cache file of any readable version: a file that starts with a
 * valid v3 header is read through its commit slots (`readCommittedTrailer`); otherwise the
 * footer at the end of the file decides (v2 decoded, v1 `ERR_XPWC_STALE_V1`, ...).
 */
export function readTrailer(
  source: ByteSource,
  fileSize: number | bigint,
  options: DecodeOptions = {},
): LoadedTrailer {
  checkSource(source);
  return runSync(source, anyTrailerSteps(toFileSize(fileSize), checkDecodeOptions(options)));
}

/** `readTrailer` with an asynchronous read callback. */
export async function readTrailerAsync(
  source: ByteSourceAsync,
  fileSize: number | bigint,
  options: DecodeOptions = {},
): Promise<LoadedTrailer> {
  checkSource(source);
  return runAsync(source, anyTrailerSteps(toFileSize(fileSize), checkDecodeOptions(options)));
}

/**
 * Walks the back-pointer chain of v3 trailers, newest to oldest, starting with the trailer
 * *before* `from`. Each step reads the footer at `prev_trailer_end`, then that trailer, and
 * checks that its generation is the `prev_generation` recorded. For `verify` (commit history,
 * which older regions are still referenced); the reader does not need it.
 * Terminates: generations strictly decrease. Throws an `XpwcFormatError` at a broken link.
 */
export function* trailerHistory(
  source: ByteSource,
  from: TrailerV3,
): Generator<TrailerV3, void, void> {
  checkSource(source);
  let current = from;
  while (current.prevGeneration !== 0) {
    const end = current.prevTrailerEnd;
    if (end < V3_MIN_TRAILER_END || end > current.indexStart) {
      throw new XpwcFormatError(
        'ERR_XPWC_BAD_FIELD',
        `prev_trailer_end ${end} is out of range`,
        end,
      );
    }
    const footer = readFooter(
      readSync(source, { offset: end - V3_FOOTER_SIZE, length: V3_FOOTER_SIZE }),
      end,
    );
    if (footer.version !== VERSION_3 || footer.indexStart < V3_HEADER_SIZE) {
      throw new XpwcFormatError(
        'ERR_XPWC_BAD_FIELD',
        'back-pointer does not lead to a v3 trailer',
        end,
      );
    }
    const length = end - footer.indexStart;
    if (length > MAX_TRAILER_BYTES) {
      throw new XpwcFormatError(
        'ERR_XPWC_LIMIT',
        'previous trailer exceeds MAX_TRAILER_BYTES',
        footer.indexStart,
      );
    }
    const prev = decodeTrailer(readSync(source, { offset: footer.indexStart, length }), end);
    if (prev.version !== VERSION_3 || prev.generation !== current.prevGeneration) {
      throw new XpwcFormatError(
        'ERR_XPWC_BAD_FIELD',
        `trailer at ${end} has generation ${prev.version === 3 ? prev.generation : '?'}, expected ${current.prevGeneration}`,
        end - V3_FOOTER_SIZE,
      );
    }
    yield prev;
    current = prev;
  }
}
