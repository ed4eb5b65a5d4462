import {
  assertBytes,
  decodeUtf8,
  encodeUtf8,
  isSafeOffset,
  isU32,
  readU64,
  toFileSize,
  viewOf,
  writeU64,
} from './bytes.js';
import {
  FOOTER_TAIL_SIZE,
  MAGIC,
  V2_ENTRY_FIXED_SIZE,
  V2_FOOTER_SIZE,
  V3_ENTRY_FIXED_SIZE,
  V3_FOOTER_SIZE,
  V3_HEADER_SIZE,
  V3_MIN_TRAILER_END,
  VERSION_1,
  VERSION_2,
  VERSION_3,
} from './constants.js';
import { crc32cOf } from './crc.js';
import { XpwcFormatError } from './errors.js';
import {
  MAX_ENTRY_COUNT,
  MAX_FILE_SIZE,
  MAX_IDENTITY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_TRAILER_BYTES,
} from './limits.js';
import type {
  DecodeOptions,
  Footer,
  FooterV2,
  FooterV3,
  Trailer,
  TrailerV2,
  TrailerV3,
  XpwcEntryV2,
  XpwcEntryV3,
} from './types.js';

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

// ---------------------------------------------------------------------------------------------
// Footer
// ---------------------------------------------------------------------------------------------

/**
 * Parses the footer at the end of `tail`. `end` is the absolute offset just past the tail (the
 * file size) or `undefined` when unknown; then offsets are relative to the tail and the checks
 * that need the file size are skipped. u64 fields above 2^53 - 1 come back as Infinity.
 */
function parseFooter(tail: Uint8Array, end: number | undefined): Footer {
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
  const magic = dv.getUint32(tail.length - 8, true);
  const version = dv.getUint32(tail.length - 4, true);
  if (magic !== MAGIC) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_MAGIC',
      `footer magic is 0x${magic.toString(16).padStart(8, '0')}, expected 0x${MAGIC.toString(16)} ("XPWC")`,
      tailEnd - 8,
    );
  }
  if (version === VERSION_1) {
    throw new XpwcFormatError(
      'ERR_XPWC_STALE_V1',
      'version 1 cache file (no per-entry seed): stale, rebuild it',
      tailEnd - 4,
    );
  }
  if (version !== VERSION_2 && version !== VERSION_3) {
    throw new XpwcFormatError(
      'ERR_XPWC_UNSUPPORTED_VERSION',
      `unsupported cache file version ${version}`,
      tailEnd - 4,
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
      indexStart: readU64(dv, f),
      entryCount: dv.getUint32(f + 8, true),
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
function checkIndexStart(footer: Footer): void {
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
 * to `tail`. Throws `ERR_XPWC_STALE_V1` for a v1 file.
 */
export function readFooter(tail: Uint8Array, fileSize?: number | bigint): Footer {
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
  if (end !== undefined) checkIndexStart(footer);
  return footer;
}

function badField(message: string, offset: number): XpwcFormatError {
  return new XpwcFormatError('ERR_XPWC_BAD_FIELD', message, offset);
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/**
 * Decodes and validates the trailer that ends at `fileSize`.
 *
 * `bytes` is a suffix of the file: its last byte is at `fileSize - 1`, and it must reach back
 * at least to `index_start` (read the footer with `readFooter` to learn how much that is; the
 * whole file works too). For a trailer that is not at the end of the file (an older committed
 * v3 trailer), pass its end offset as `fileSize` and bytes ending there.
 *
 * All-or-nothing: any invalid byte rejects the whole trailer with an `XpwcFormatError`.
 */
export function decodeTrailer(
  bytes: Uint8Array,
  fileSize: number | bigint,
  options: DecodeOptions = {},
): Trailer {
  assertBytes(bytes, 'decodeTrailer: bytes');
  const end = toFileSize(fileSize);
  if (bytes.length > end) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `bytes is ${bytes.length} long, more than fileSize ${end}`,
    );
  }
  const expectedIdentity = options?.expectedIdentity;
  if (expectedIdentity !== undefined && typeof expectedIdentity !== 'string') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'expectedIdentity must be a string');
  }
  const footer = parseFooter(bytes, end);
  if (footer.version === VERSION_2) return decodeV2(bytes, end, footer);
  return decodeV3(bytes, end, footer, expectedIdentity);
}

function requireTrailerBytes(bytes: Uint8Array, end: number, indexStart: number): number {
  const base = end - bytes.length;
  if (end - indexStart > MAX_TRAILER_BYTES) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `trailer is ${end - indexStart} bytes, more than MAX_TRAILER_BYTES (${MAX_TRAILER_BYTES})`,
      indexStart,
    );
  }
  if (indexStart < base) {
    throw new XpwcFormatError(
      'ERR_XPWC_SHORT_INPUT',
      `trailer starts at ${indexStart} but bytes start at ${base}: pass the last ${end - indexStart} bytes`,
      indexStart,
    );
  }
  return base;
}

function checkEntryCount(count: number, at: number): void {
  if (count > MAX_ENTRY_COUNT) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `entry_count ${count} exceeds MAX_ENTRY_COUNT (${MAX_ENTRY_COUNT})`,
      at,
    );
  }
}

function decodeV2(bytes: Uint8Array, end: number, footer: FooterV2): TrailerV2 {
  checkIndexStart(footer);
  const indexStart = footer.indexStart;
  const base = requireTrailerBytes(bytes, end, indexStart);
  checkEntryCount(footer.entryCount, footer.footerOffset + V2_FOOTER_FIELDS.entryCount);
  const entries = decodeEntries(bytes, base, indexStart, footer.footerOffset, footer.entryCount, 2);
  return {
    version: 2,
    indexStart,
    trailerEnd: end,
    entries: entries as XpwcEntryV2[],
    identity: null,
  };
}

function decodeV3(
  bytes: Uint8Array,
  end: number,
  footer: FooterV3,
  expectedIdentity: string | undefined,
): TrailerV3 {
  checkIndexStart(footer);
  const { indexStart, footerOffset } = footer;
  const F = V3_FOOTER_FIELDS;
  const base = requireTrailerBytes(bytes, end, indexStart);

  // Nothing in the trailer is trusted before its CRC matches.
  const crcEnd = footerOffset + F.trailerCrc32c;
  const actual = crc32cOf(bytes.subarray(indexStart - base, crcEnd - base));
  if (actual !== footer.trailerCrc32c) {
    throw new XpwcFormatError(
      'ERR_XPWC_CHECKSUM',
      `trailer CRC32C is 0x${actual.toString(16).padStart(8, '0')}, footer says 0x${footer.trailerCrc32c.toString(16).padStart(8, '0')} (torn or corrupt trailer)`,
      footerOffset + F.trailerCrc32c,
    );
  }
  if (footer.flags !== 0) {
    throw badField(
      `footer flags 0x${footer.flags.toString(16)} are reserved, must be 0`,
      footerOffset + F.flags,
    );
  }
  const { generation, prevGeneration, prevTrailerEnd } = footer;
  if (!(generation >= 1 && Number.isFinite(generation))) {
    throw badField(
      `generation ${generation} must be in [1, 2^53 - 1]`,
      footerOffset + F.generation,
    );
  }
  if (prevGeneration === 0) {
    if (prevTrailerEnd !== 0) {
      throw badField(
        'prev_trailer_end is set but prev_generation is 0',
        footerOffset + F.prevTrailerEnd,
      );
    }
  } else {
    if (!(prevGeneration < generation)) {
      throw badField(
        `prev_generation ${prevGeneration} is not below generation ${generation}`,
        footerOffset + F.prevGeneration,
      );
    }
    if (!(prevTrailerEnd >= V3_MIN_TRAILER_END && prevTrailerEnd <= indexStart)) {
      throw badField(
        `prev_trailer_end ${prevTrailerEnd} is outside [${V3_MIN_TRAILER_END}, index_start ${indexStart}]`,
        footerOffset + F.prevTrailerEnd,
      );
    }
  }
  checkEntryCount(footer.entryCount, footerOffset + F.entryCount);
  const identityLength = footer.identityLength;
  if (identityLength > MAX_IDENTITY_LENGTH) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `identity_len ${identityLength} exceeds MAX_IDENTITY_LENGTH (${MAX_IDENTITY_LENGTH})`,
      footerOffset + F.identityLength,
    );
  }
  if (identityLength > footerOffset - indexStart) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `identity_len ${identityLength} does not fit between index_start and the footer`,
      footerOffset + F.identityLength,
    );
  }
  const identityStart = footerOffset - identityLength;
  const identity = decodeUtf8(
    bytes,
    identityStart - base,
    footerOffset - base,
    identityStart,
    'identity',
  );
  if (expectedIdentity !== undefined && identity !== expectedIdentity) {
    throw new XpwcFormatError(
      'ERR_XPWC_IDENTITY_MISMATCH',
      `cache identity ${JSON.stringify(identity)} is not the expected ${JSON.stringify(expectedIdentity)}`,
      identityStart,
    );
  }
  const entries = decodeEntries(bytes, base, indexStart, identityStart, footer.entryCount, 3);
  return {
    version: 3,
    indexStart,
    trailerEnd: end,
    entries: entries as XpwcEntryV3[],
    identity,
    generation,
    prevTrailerEnd,
    prevGeneration,
    trailerCrc32c: footer.trailerCrc32c,
  };
}

/**
 * Decodes `count` entries from `indexStart` up to exactly `stop` (absolute offsets; `base` is
 * the absolute offset of bytes[0]). Applies ExecuTorch's per-entry checks and ours.
 */
function decodeEntries(
  bytes: Uint8Array,
  base: number,
  indexStart: number,
  stop: number,
  count: number,
  version: 2 | 3,
): Array<XpwcEntryV2 | XpwcEntryV3> {
  const dv = viewOf(bytes);
  const fixedAfterName = (version === 2 ? V2_ENTRY_FIXED_SIZE : V3_ENTRY_FIXED_SIZE) - 4;
  const minOffset = version === 2 ? 0 : V3_HEADER_SIZE;
  const localStop = stop - base;
  let cur = indexStart - base;
  const entries: Array<XpwcEntryV2 | XpwcEntryV3> = [];
  for (let i = 0; i < count; i++) {
    if (cur + 4 > localStop) {
      throw new XpwcFormatError(
        'ERR_XPWC_TRUNCATED',
        `truncated index: it ends after ${i} of ${count} entries`,
        base + cur,
      );
    }
    const nameLen = dv.getUint32(cur, true);
    if (nameLen > MAX_NAME_LENGTH) {
      throw new XpwcFormatError(
        'ERR_XPWC_LIMIT',
        `entry ${i}: name_len ${nameLen} exceeds MAX_NAME_LENGTH (${MAX_NAME_LENGTH})`,
        base + cur,
      );
    }
    const nameStart = cur + 4;
    const p = nameStart + nameLen;
    if (p + fixedAfterName > localStop) {
      throw new XpwcFormatError(
        'ERR_XPWC_TRUNCATED',
        `entry ${i}: name_len ${nameLen} runs past the end of the index`,
        base + cur,
      );
    }
    const name = decodeUtf8(bytes, nameStart, p, base + nameStart, `entry ${i} name`);
    const fileOffset = readU64(dv, p);
    const dataSize = readU64(dv, p + 8);
    const seed = dv.getUint32(p + 16, true);
    if (!(fileOffset >= minOffset && fileOffset < indexStart)) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i} ${JSON.stringify(name)}: file_offset ${fileOffset} is outside the data region [${minOffset}, ${indexStart})`,
        base + p,
      );
    }
    if (dataSize > indexStart - fileOffset) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i} ${JSON.stringify(name)}: data_size ${dataSize} at ${fileOffset} runs past index_start ${indexStart}`,
        base + p + 8,
      );
    }
    if (version === 2) {
      entries.push({ name, fileOffset, dataSize, seed });
    } else {
      entries.push({
        name,
        fileOffset,
        dataSize,
        seed,
        fingerprint: dv.getUint32(p + 20, true),
        crc32c: dv.getUint32(p + 24, true),
      });
    }
    cur = p + fixedAfterName;
  }
  if (cur !== localStop) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRAILING_BYTES',
      `${localStop - cur} unexpected bytes between the last entry and the ${version === 2 ? 'footer' : 'identity'}`,
      base + cur,
    );
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

export interface EncodeOptionsV2 {
  readonly version: 2;
  /** File offset where the trailer will be written (end of the packed data). */
  readonly indexStart: number;
}

export interface EncodeOptionsV3 {
  /** Defaults to 3. */
  readonly version?: 3;
  /** File offset where the trailer will be written; at least V3_HEADER_SIZE. */
  readonly indexStart: number;
  /** Cache identity (packer library, version, ISA/tiling configuration). */
  readonly identity: string;
  /** Commit generation, >= 1 (default 1). The commit slot must carry the same number. */
  readonly generation?: number;
  /** End offset of the previous committed trailer (0 or omitted: none). */
  readonly prevTrailerEnd?: number;
  /** Generation of the previous committed trailer (0 or omitted: none). */
  readonly prevGeneration?: number;
}

export type EncodeOptions = EncodeOptionsV2 | EncodeOptionsV3;

function invalid(message: string): XpwcFormatError {
  return new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', message);
}

/**
 * Encodes a trailer (index, then for v3 the identity, then the footer), to be written at
 * `indexStart`; the file then ends right after it. Validates the entries with the same rules
 * the decoder applies, so every encoded trailer decodes. Never writes v1.
 */
export function encodeTrailer(
  entries: readonly XpwcEntryV2[],
  options: EncodeOptionsV2,
): Uint8Array;
export function encodeTrailer(
  entries: readonly XpwcEntryV3[],
  options: EncodeOptionsV3,
): Uint8Array;
export function encodeTrailer(
  entries: readonly (XpwcEntryV2 | XpwcEntryV3)[],
  options: EncodeOptions,
): Uint8Array {
  if (options === null || typeof options !== 'object') throw invalid('options must be an object');
  const version = options.version ?? VERSION_3;
  if (version !== VERSION_2 && version !== VERSION_3) {
    throw invalid(`can only encode version 2 or 3, not ${String(version)}`);
  }
  if (!Array.isArray(entries)) throw invalid('entries must be an array');
  if (entries.length > MAX_ENTRY_COUNT) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `${entries.length} entries exceed MAX_ENTRY_COUNT (${MAX_ENTRY_COUNT})`,
    );
  }
  if (version === VERSION_2 && entries.length === 0) {
    throw invalid('a v2 trailer needs at least one entry (ExecuTorch rejects an empty index)');
  }
  const { indexStart } = options;
  if (!isSafeOffset(indexStart)) throw invalid('indexStart must be a non-negative safe integer');
  if (version === VERSION_3 && indexStart < V3_HEADER_SIZE) {
    throw invalid(`a v3 indexStart must be at least V3_HEADER_SIZE (${V3_HEADER_SIZE})`);
  }

  let identityBytes: Uint8Array = new Uint8Array(0);
  let generation = 0;
  let prevTrailerEnd = 0;
  let prevGeneration = 0;
  if (version === VERSION_3) {
    const o = options as EncodeOptionsV3;
    identityBytes = encodeUtf8(o.identity, MAX_IDENTITY_LENGTH, 'identity', 'MAX_IDENTITY_LENGTH');
    generation = o.generation ?? 1;
    prevTrailerEnd = o.prevTrailerEnd ?? 0;
    prevGeneration = o.prevGeneration ?? 0;
    if (!isSafeOffset(generation) || generation < 1) {
      throw invalid('generation must be a safe integer >= 1');
    }
    if (!isSafeOffset(prevTrailerEnd) || !isSafeOffset(prevGeneration)) {
      throw invalid('prevTrailerEnd and prevGeneration must be non-negative safe integers');
    }
    if ((prevGeneration === 0) !== (prevTrailerEnd === 0)) {
      throw invalid('prevTrailerEnd and prevGeneration must be both set or both 0');
    }
    if (prevGeneration !== 0) {
      if (prevGeneration >= generation) throw invalid('prevGeneration must be below generation');
      if (prevTrailerEnd < V3_MIN_TRAILER_END || prevTrailerEnd > indexStart) {
        throw invalid(`prevTrailerEnd must be in [${V3_MIN_TRAILER_END}, indexStart]`);
      }
    }
  }

  const fixed = version === VERSION_2 ? V2_ENTRY_FIXED_SIZE : V3_ENTRY_FIXED_SIZE;
  const minOffset = version === VERSION_2 ? 0 : V3_HEADER_SIZE;
  const names: Uint8Array[] = new Array(entries.length);
  let size = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e === null || typeof e !== 'object') throw invalid(`entry ${i} must be an object`);
    const name = encodeUtf8(e.name, MAX_NAME_LENGTH, `entry ${i} name`, 'MAX_NAME_LENGTH');
    names[i] = name;
    if (!isSafeOffset(e.fileOffset) || !isSafeOffset(e.dataSize)) {
      throw invalid(`entry ${i}: fileOffset and dataSize must be non-negative safe integers`);
    }
    if (!(e.fileOffset >= minOffset && e.fileOffset < indexStart)) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i}: fileOffset ${e.fileOffset} is outside the data region [${minOffset}, ${indexStart})`,
      );
    }
    if (e.dataSize > indexStart - e.fileOffset) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i}: dataSize ${e.dataSize} at ${e.fileOffset} runs past indexStart ${indexStart}`,
      );
    }
    if (!isU32(e.seed)) throw invalid(`entry ${i}: seed must be a u32`);
    if (version === VERSION_3) {
      const e3 = e as XpwcEntryV3;
      if (!isU32(e3.fingerprint)) throw invalid(`entry ${i}: fingerprint must be a u32`);
      if (!isU32(e3.crc32c)) throw invalid(`entry ${i}: crc32c must be a u32`);
    }
    size += fixed + name.length;
    if (size > MAX_TRAILER_BYTES) break; // reported below, before allocating
  }
  const footerSize = version === VERSION_2 ? V2_FOOTER_SIZE : V3_FOOTER_SIZE;
  size += identityBytes.length + footerSize;
  if (size > MAX_TRAILER_BYTES) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `trailer would exceed MAX_TRAILER_BYTES (${MAX_TRAILER_BYTES})`,
    );
  }
  if (indexStart + size > MAX_FILE_SIZE) {
    throw new XpwcFormatError('ERR_XPWC_LIMIT', 'trailer would end beyond MAX_FILE_SIZE');
  }

  const out = new Uint8Array(size);
  const dv = viewOf(out);
  let p = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as XpwcEntryV3;
    const name = names[i] as Uint8Array;
    dv.setUint32(p, name.length, true);
    out.set(name, p + 4);
    p += 4 + name.length;
    writeU64(dv, p, e.fileOffset);
    writeU64(dv, p + 8, e.dataSize);
    dv.setUint32(p + 16, e.seed, true);
    if (version === VERSION_3) {
      dv.setUint32(p + 20, e.fingerprint, true);
      dv.setUint32(p + 24, e.crc32c, true);
    }
    p += fixed - 4;
  }
  if (version === VERSION_2) {
    writeU64(dv, p, indexStart);
    dv.setUint32(p + 8, entries.length, true);
    dv.setUint32(p + 12, MAGIC, true);
    dv.setUint32(p + 16, VERSION_2, true);
    return out;
  }
  out.set(identityBytes, p);
  p += identityBytes.length;
  const F = V3_FOOTER_FIELDS;
  writeU64(dv, p + F.indexStart, indexStart);
  dv.setUint32(p + F.entryCount, entries.length, true);
  dv.setUint32(p + F.identityLength, identityBytes.length, true);
  writeU64(dv, p + F.generation, generation);
  writeU64(dv, p + F.prevTrailerEnd, prevTrailerEnd);
  writeU64(dv, p + F.prevGeneration, prevGeneration);
  dv.setUint32(p + F.flags, 0, true);
  dv.setUint32(p + F.trailerCrc32c, crc32cOf(out.subarray(0, p + F.trailerCrc32c)), true);
  dv.setUint32(p + F.magic, MAGIC, true);
  dv.setUint32(p + F.version, VERSION_3, true);
  return out;
}
