// Version 3: entries (+ optional layout records), identity, 56-byte footer with a CRC32C.
import { decodeUtf8, encodeUtf8, isSafeOffset, viewOf, writeU64 } from './bytes.js';
import {
  MAGIC,
  V3_FLAG_ENTRY_LAYOUT,
  V3_FOOTER_SIZE,
  V3_HEADER_SIZE,
  V3_KNOWN_FLAGS,
  V3_MIN_TRAILER_END,
  VERSION_3,
} from './constants.js';
import { crc32cOf } from './crc.js';
import {
  decodeEntries,
  type EntryFormat,
  entriesWhenRead,
  prepareEntries,
  writeEntries,
} from './entry-codec.js';
import { invalidArgument, XpwcFormatError } from './errors.js';
import { badField, checkIndexStart, V3_FOOTER_FIELDS } from './footer.js';
import { MAX_IDENTITY_LENGTH } from './limits.js';
import { checkEncodedTrailerSize, checkEntryCount, requireTrailerBytes } from './trailer-checks.js';
import type { FooterV3, TrailerV3, XpwcEntryV3 } from './types.js';

export function decodeV3(
  bytes: Uint8Array,
  end: number,
  footer: FooterV3,
  expectedIdentity: string | undefined,
  crc32c: (bytes: Uint8Array) => number,
): TrailerV3 {
  checkIndexStart(footer);
  const { indexStart, footerOffset } = footer;
  const F = V3_FOOTER_FIELDS;
  const base = requireTrailerBytes(bytes, end, indexStart);

  // Nothing in the trailer is trusted before its CRC matches.
  const crcEnd = footerOffset + F.trailerCrc32c;
  const actual = crc32c(bytes.subarray(indexStart - base, crcEnd - base)) >>> 0;
  if (actual !== footer.trailerCrc32c) {
    throw new XpwcFormatError(
      'ERR_XPWC_CHECKSUM',
      `trailer CRC32C is 0x${actual.toString(16).padStart(8, '0')}, footer says 0x${footer.trailerCrc32c.toString(16).padStart(8, '0')} (torn or corrupt trailer)`,
      footerOffset + F.trailerCrc32c,
    );
  }
  if ((footer.flags & ~V3_KNOWN_FLAGS) !== 0) {
    throw badField(
      `footer flags 0x${footer.flags.toString(16)} set reserved bits (known: 0x${V3_KNOWN_FLAGS.toString(16)})`,
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
  const format: EntryFormat = {
    version: 3,
    withLayout: (footer.flags & V3_FLAG_ENTRY_LAYOUT) !== 0,
  };
  const columns = decodeEntries(
    bytes,
    base,
    indexStart,
    identityStart,
    footer.entryCount,
    format,
    null,
  );
  const entries = entriesWhenRead<XpwcEntryV3>(columns);
  return {
    version: 3,
    indexStart,
    trailerEnd: end,
    get entries() {
      return entries();
    },
    columns,
    identity,
    generation,
    prevTrailerEnd,
    prevGeneration,
    trailerCrc32c: footer.trailerCrc32c,
    flags: footer.flags,
  };
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

/** Checks the commit fields of `options` the way the decoder checks the footer. */
function commitFieldsOf(o: EncodeOptionsV3, indexStart: number) {
  const generation = o.generation ?? 1;
  const prevTrailerEnd = o.prevTrailerEnd ?? 0;
  const prevGeneration = o.prevGeneration ?? 0;
  if (!isSafeOffset(generation) || generation < 1) {
    throw invalidArgument('generation must be a safe integer >= 1');
  }
  if (!isSafeOffset(prevTrailerEnd) || !isSafeOffset(prevGeneration)) {
    throw invalidArgument('prevTrailerEnd and prevGeneration must be non-negative safe integers');
  }
  if ((prevGeneration === 0) !== (prevTrailerEnd === 0)) {
    throw invalidArgument('prevTrailerEnd and prevGeneration must be both set or both 0');
  }
  if (prevGeneration !== 0) {
    if (prevGeneration >= generation)
      throw invalidArgument('prevGeneration must be below generation');
    if (prevTrailerEnd < V3_MIN_TRAILER_END || prevTrailerEnd > indexStart) {
      throw invalidArgument(`prevTrailerEnd must be in [${V3_MIN_TRAILER_END}, indexStart]`);
    }
  }
  return { generation, prevTrailerEnd, prevGeneration };
}

/**
 * Encodes a v3 trailer. The footer flag V3_FLAG_ENTRY_LAYOUT (and a 32-byte layout record per
 * entry, zero for entries without one) is written only when some entry has a layout, so a
 * trailer without layouts is byte for byte what earlier versions wrote.
 */
export function encodeV3(entries: readonly XpwcEntryV3[], options: EncodeOptionsV3): Uint8Array {
  const { indexStart } = options;
  if (indexStart < V3_HEADER_SIZE) {
    throw invalidArgument(`a v3 indexStart must be at least V3_HEADER_SIZE (${V3_HEADER_SIZE})`);
  }
  const identity = encodeUtf8(
    options.identity,
    MAX_IDENTITY_LENGTH,
    'identity',
    'MAX_IDENTITY_LENGTH',
  );
  const { generation, prevTrailerEnd, prevGeneration } = commitFieldsOf(options, indexStart);
  const withLayout = entries.some((e) => e !== null && typeof e === 'object' && e.layout != null);
  const format: EntryFormat = { version: 3, withLayout };
  const prepared = prepareEntries(entries, format, indexStart);
  const size = prepared.size + identity.length + V3_FOOTER_SIZE;
  checkEncodedTrailerSize(indexStart, size);
  const out = new Uint8Array(size);
  let p = writeEntries(out, entries, prepared, format);
  out.set(identity, p);
  p += identity.length;
  const dv = viewOf(out);
  const F = V3_FOOTER_FIELDS;
  writeU64(dv, p + F.indexStart, indexStart);
  dv.setUint32(p + F.entryCount, entries.length, true);
  dv.setUint32(p + F.identityLength, identity.length, true);
  writeU64(dv, p + F.generation, generation);
  writeU64(dv, p + F.prevTrailerEnd, prevTrailerEnd);
  writeU64(dv, p + F.prevGeneration, prevGeneration);
  dv.setUint32(p + F.flags, withLayout ? V3_FLAG_ENTRY_LAYOUT : 0, true);
  // The CRC covers everything before it: entries, identity, footer fields up to the CRC.
  dv.setUint32(p + F.trailerCrc32c, crc32cOf(out.subarray(0, p + F.trailerCrc32c)), true);
  dv.setUint32(p + F.magic, MAGIC, true);
  dv.setUint32(p + F.version, VERSION_3, true);
  return out;
}
