import {
  encodeHeader,
  isXpwcFormatError,
  MAGIC,
  readTrailer,
  V3_HEADER_SIZE,
  type XpwcFormatError,
  type XpwcIssue,
} from '@memlayer/cache-format';
import { writeAll, writeFileAtomically } from './atomic-replace.js';
import type { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';
import { StorageFallback } from './fallback.js';
import type { CacheFormat, CommittedIndex } from './index-io.js';
import { toIndex } from './index-io.js';
import { emitCacheWarning } from './warnings.js';

/**
 * What a FileStorage may do with the file at its path, decided once per opened file
 * (under its lock). The policy, like a database's: a file is only ever replaced when it is
 * ours (a v3 file: memlayer's own format) or a v1 file (ExecuTorch rejects v1 and rewrites
 * it itself); any other file stays byte for byte as it is.
 */
export type FileVerdict =
  /** Readable: load it, append in its own format. */
  | {
      readonly kind: 'use';
      readonly format: CacheFormat;
      readonly index: CommittedIndex | null;
      /** Defects ExecuTorch's loader accepts too; appending is then refused. */
      readonly tolerated: readonly XpwcIssue[];
      /** A newer commit whose trailer is damaged: the one before it is used. */
      readonly damagedCommit?: XpwcFormatError;
    }
  /** Ours but unusable (identity, damaged header), or v1: replace by rename in `format`. */
  | { readonly kind: 'rebuild'; readonly format: CacheFormat; readonly error: XpwcFormatError }
  /** Never written to: packed bytes go to the heap. */
  | {
      readonly kind: 'refuse';
      readonly reason: 'not-a-cache' | 'foreign-format';
      readonly error: XpwcFormatError | null;
    };

/**
 * Reads the committed index of an open cache file (call under its lock). An empty file is
 * initialised in `newFileFormat`. A v3 file with a valid header and no usable commit yet
 * (writers still appending, or both slots lost) is appended to as it is.
 */
export function judgeCacheFile(
  file: CacheFile,
  newFileFormat: CacheFormat,
  identity: string,
  pageSize: number,
): FileVerdict {
  const size = file.size();
  if (size === 0) {
    if (newFileFormat === 3) {
      file.write(encodeHeader({ pageSize }), 0);
      file.datasync();
    }
    return { kind: 'use', format: newFileFormat, index: null, tolerated: [] };
  }
  try {
    const { trailer, commit } = readTrailer((o, l) => file.read(o, l), size, {
      expectedIdentity: identity,
      lenient: true,
      crc32c: dataCrc32c,
    });
    const tolerated = trailer.version === 2 ? (trailer.tolerated ?? []) : [];
    const damaged = commit?.skipped[0]?.error;
    return {
      kind: 'use',
      format: trailer.version,
      index: toIndex(trailer, commit?.slot.generation ?? 0),
      tolerated,
      ...(damaged === undefined ? {} : { damagedCommit: damaged }),
    };
  } catch (error) {
    if (!isXpwcFormatError(error)) throw error;
    return judgeUnreadable(file, size, error);
  }
}

function judgeUnreadable(file: CacheFile, size: number, error: XpwcFormatError): FileVerdict {
  const head = file.read(0, 8);
  const u32 = (bytes: Uint8Array, at: number) =>
    bytes.byteLength >= at + 4
      ? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true)
      : -1;
  if (u32(head, 0) === MAGIC && u32(head, 4) === 3) {
    // No commit yet (writers still appending, or both slots lost): appended to as it is.
    // But a slot that committed a trailer now damaged is a file this package cannot
    // read back: rebuilt, and the damage named (the cause is the first commit skipped).
    const damaged = isXpwcFormatError(error.cause) ? error.cause : null;
    if (error.code === 'ERR_XPWC_NO_COMMIT' && damaged === null) {
      return { kind: 'use', format: 3, index: null, tolerated: [] };
    }
    return { kind: 'rebuild', format: 3, error: damaged ?? error };
  }
  // A header torn while this package created the file: no one else wrote those zeros.
  if (size <= V3_HEADER_SIZE && head.every((byte) => byte === 0)) {
    return { kind: 'rebuild', format: 3, error };
  }
  // ExecuTorch rejects v1 files (they carry no seed) and starts them over itself: a v2
  // file in their place is what it would write.
  if (error.code === 'ERR_XPWC_STALE_V1') return { kind: 'rebuild', format: 2, error };
  const tail = size >= 8 ? file.read(size - 8, 8) : new Uint8Array(0);
  if (u32(tail, 0) === MAGIC) return { kind: 'refuse', reason: 'foreign-format', error };
  return { kind: 'refuse', reason: 'not-a-cache', error };
}

export interface PolicySettings {
  /** Format to give an empty file. */
  readonly format: CacheFormat;
  readonly identity: string;
  readonly fileMode: number;
  readonly pageSize: number;
}

export type PolicyOutcome =
  | {
      readonly kind: 'use';
      readonly format: CacheFormat;
      readonly index: CommittedIndex | null;
      /** Its entries are served, but new ones must not be appended (heap, 'foreign-format'). */
      readonly appendRefused: boolean;
    }
  /** Replaced by a fresh file in `format`: open the path again. */
  | { readonly kind: 'rebuilt'; readonly format: CacheFormat; readonly because: string };

/**
 * Judges the file and acts on the verdict: a refused file throws StorageFallback (its
 * reason: 'not-a-cache' or 'foreign-format'); a rebuild writes a fresh file beside it (mode
 * and owner kept) and renames it over, so processes that map the old one keep their bytes.
 */
export function applyFilePolicy(file: CacheFile, settings: PolicySettings): PolicyOutcome {
  const verdict = judgeCacheFile(file, settings.format, settings.identity, settings.pageSize);
  if (verdict.kind === 'refuse') {
    throw new StorageFallback(
      verdict.reason,
      verdict.reason === 'not-a-cache'
        ? `${file.path} is not a cache file; it is left as it is`
        : `${file.path} is a cache file this package cannot extend safely; it is left as it is`,
      { cause: verdict.error },
    );
  }
  if (verdict.kind === 'rebuild') {
    emitCacheWarning(
      'MEMLAYER_CACHE_REBUILT',
      `Cache file ${file.path} is not usable (${verdict.error.code}); starting a fresh one`,
      verdict.error,
    );
    writeFileAtomically(file.path, { fileMode: settings.fileMode, keepFrom: file.stat() }, (fd) => {
      if (verdict.format === 3) writeAll(fd, encodeHeader({ pageSize: settings.pageSize }), 0);
    });
    return { kind: 'rebuilt', format: verdict.format, because: verdict.error.code };
  }
  if (verdict.damagedCommit !== undefined) {
    emitCacheWarning(
      'MEMLAYER_CACHE_DAMAGED_COMMIT',
      `Cache file ${file.path}: the trailer of its newest commit is damaged (${verdict.damagedCommit.code}); the commit before it is used`,
      verdict.damagedCommit,
    );
  }
  // A footer-only file with 0 entries is what ExecuTorch writes for an empty cache:
  // appending a full index to it is what ExecuTorch itself would do. Any other defect
  // (a short index, trailing bytes) is served as it is and never rewritten.
  const refused = verdict.tolerated.filter((issue) => issue.code !== 'ERR_XPWC_BAD_INDEX_START');
  if (refused.length > 0) {
    // Serve what is valid; rewriting the index of such a file is left to ExecuTorch.
    const codes = refused.map((issue) => issue.code).join(', ');
    emitCacheWarning(
      'MEMLAYER_CACHE_LENIENT_READ',
      `Cache file ${file.path} has defects ExecuTorch tolerates (${codes}); its valid entries are used, new ones stay on the heap`,
    );
  }
  return {
    kind: 'use',
    format: verdict.format,
    index: verdict.index,
    appendRefused: refused.length > 0,
  };
}
