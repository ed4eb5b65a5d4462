// The footer ends every trailer; its last 8 bytes (magic, version) say how to read the rest.
import { assertBytes, readU64, toFileSize, viewOf } from './bytes.js';
import {
  FOOTER_TAIL_SIZE,
  MAGIC,
  V2_FOOTER_SIZE,
  V3_FOOTER_SIZE,
  V3_HEADER_SIZE,
  V3_MIN_TRAILER_END,
  VERSION_1,
  VERSION_2,
  VERSION_3,
} from './constants.js';
import { XpwcFormatError } from './errors.js';
import type { DecodeOptions, Footer } from './types.js';

/** Byte offsets of the v3 footer fields, relative to the footer's first byte. */
export const V3_FOOTER_FIELDS = {
  indexStart: 0,
  entryCount: 8,
  identityLength: 12,
  generation: 16,
  prevTrailerEnd: 24,
  prevGeneration: 32,
  flags: 40,
  trailerCrc32c: 44,
  magic: 48,
  version: 52,
} as const;

/** Byte offsets of the v2 footer fields, relative to the footer's first byte. */
export const V2_FOOTER_FIELDS = { indexStart: 0, entryCount: 8, magic: 12, version: 16 } as const;

/**
 * Parses the footer at the end of `tail`. `end` is the absolute offset just past the tail (the
 * file size) or `undefined` when unknown; then offsets are relative to the tail and the checks
 * that need the file size are skipped. u64 fields above 2^53 - 1 come back as Infinity.
 */
export function parseFooter(tail: Uint8Array, end: number | undefined): Footer {
  const base = end === undefined ? 0 : end - tail.length;
  const tailEnd = base + tail.length;
  if (end !== undefined && end < FOOTER_TAIL_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `file is ${end} bytes, shorter than magic + version (${FOOTER_TAIL_SIZE})`,
      0,
    );
  }
  if (tail.length < FOOTER_TAIL_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_SHORT_INPUT',
      `need the last ${FOOTER_TAIL_SIZE} bytes of the file, got ${tail.length}`,
      tailEnd - FOOTER_TAIL_SIZE,
    );
  }
  const dv = viewOf(tail);
  // magic:u32 | version:u32 end every footer: they are read before the version's layout is known.
  const magicAt = tail.length - FOOTER_TAIL_SIZE;
  const versionAt = magicAt + 4;
  const magic = dv.getUint32(magicAt, true);
  const version = dv.getUint32(versionAt, true);
  if (magic !== MAGIC) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_MAGIC',
      `footer magic is 0x${magic.toString(16).padStart(8, '0')}, expected 0x${MAGIC.toString(16)} ("XPWC")`,
      tailEnd - FOOTER_TAIL_SIZE,
    );
  }
  if (version === VERSION_1) {
    throw new XpwcFormatError(
      'ERR_XPWC_STALE_V1',
      'version 1 cache file (no per-entry seed): stale, rebuild it',
      base + versionAt,
    );
  }
  if (version !== VERSION_2 && version !== VERSION_3) {
    throw new XpwcFormatError(
      'ERR_XPWC_UNSUPPORTED_VERSION',
      `unsupported cache file version ${version}`,
      base + versionAt,
    );
  }
  const size = version === VERSION_2 ? V2_FOOTER_SIZE : V3_FOOTER_SIZE;
  const minEnd = version === VERSION_2 ? V2_FOOTER_SIZE : V3_MIN_TRAILER_END;
  if (end !== undefined && end < minEnd) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `file is ${end} bytes; a version ${version} file needs at least ${minEnd}`,
      0,
    );
  }
  if (tail.length < size) {
    throw new XpwcFormatError(
      'ERR_XPWC_SHORT_INPUT',
      `need the last ${size} bytes for a version ${version} footer, got ${tail.length}`,
      tailEnd - size,
    );
  }
  const f = tail.length - size;
  const footerOffset = tailEnd - size;
  if (version === VERSION_2) {
    return {
      version: 2,
      footerSize: 20,
      footerOffset,
      indexStart: readU64(dv, f + V2_FOOTER_FIELDS.indexStart),
      entryCount: dv.getUint32(f + V2_FOOTER_FIELDS.entryCount, true),
    };
  }
  const F = V3_FOOTER_FIELDS;
  return {
    version: 3,
    footerSize: 56,
    footerOffset,
    indexStart: readU64(dv, f + F.indexStart),
    entryCount: dv.getUint32(f + F.entryCount, true),
    identityLength: dv.getUint32(f + F.identityLength, true),
    generation: readU64(dv, f + F.generation),
    prevTrailerEnd: readU64(dv, f + F.prevTrailerEnd),
    prevGeneration: readU64(dv, f + F.prevGeneration),
    flags: dv.getUint32(f + F.flags, true),
    trailerCrc32c: dv.getUint32(f + F.trailerCrc32c, true),
  };
}

/** Rejects an index_start that cannot start a trailer ending at the footer (file size known). */
export function checkIndexStart(footer: Footer): void {
  const { indexStart, footerOffset } = footer;
  if (footer.version === VERSION_2) {
    // ExecuTorch: index_start < size - 20, so an empty index is rejected too.
    if (!(indexStart < footerOffset)) {
      throw new XpwcFormatError(
        'ERR_XPWC_BAD_INDEX_START',
        `index_start ${indexStart} is not before the footer at ${footerOffset} (empty or misplaced index)`,
        footerOffset,
      );
    }
    return;
  }
  if (!(indexStart >= V3_HEADER_SIZE && indexStart <= footerOffset)) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_INDEX_START',
      `index_start ${indexStart} is outside [${V3_HEADER_SIZE}, ${footerOffset}] (header end .. footer)`,
      footerOffset,
    );
  }
}

/**
 * Reads the footer from the last bytes of a file. Pass at least `MAX_FOOTER_SIZE` bytes (or the
 * whole file when it is shorter). With `fileSize` (the offset just past `tail`), error offsets
 * are absolute and `index_start` is checked against the file; without it, offsets are relative
 * to `tail`. Throws `ERR_XPWC_STALE_V1` for a v1 file. With `lenient`, a v2 footer whose
 * index_start is its own offset (an empty index) is returned, not rejected.
 */
export function readFooter(
  tail: Uint8Array,
  fileSize?: number | bigint,
  options: Pick<DecodeOptions, 'lenient'> = {},
): Footer {
  assertBytes(tail, 'readFooter: tail');
  const end = fileSize === undefined ? undefined : toFileSize(fileSize);
  if (end !== undefined && tail.length > end) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `tail is ${tail.length} bytes, longer than fileSize ${end}`,
    );
  }
  const footer = parseFooter(tail, end);
  if (!Number.isFinite(footer.indexStart)) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_INDEX_START',
      'index_start is beyond MAX_FILE_SIZE (2^53 - 1)',
      footer.footerOffset,
    );
  }
  if (footer.version === VERSION_3) {
    const F = V3_FOOTER_FIELDS;
    if (!Number.isFinite(footer.generation)) {
      throw badField('generation is beyond 2^53 - 1', footer.footerOffset + F.generation);
    }
    if (!Number.isFinite(footer.prevTrailerEnd)) {
      throw badField('prev_trailer_end is beyond 2^53 - 1', footer.footerOffset + F.prevTrailerEnd);
    }
    if (!Number.isFinite(footer.prevGeneration)) {
      throw badField('prev_generation is beyond 2^53 - 1', footer.footerOffset + F.prevGeneration);
    }
  }
  // Lenient v2: an empty index (index_start = footer offset) is left for decodeTrailer to report.
  const emptyV2 =
    options?.lenient === true &&
    footer.version === VERSION_2 &&
    footer.indexStart === footer.footerOffset;
  if (end !== undefined && !emptyV2) checkIndexStart(footer);
  return footer;
}

export function badField(message: string, offset: number): XpwcFormatError {
  return new XpwcFormatError('ERR_XPWC_BAD_FIELD', message, offset);
}
