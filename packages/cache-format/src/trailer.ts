// Entry points of the trailer codec: dispatch on the footer's version (v2 or v3).
import { assertBytes, isSafeOffset, toFileSize } from './bytes.js';
import { VERSION_2, VERSION_3 } from './constants.js';
import { crc32cOf } from './crc.js';
import { invalidArgument, XpwcFormatError } from './errors.js';
import { parseFooter } from './footer.js';
import { MAX_ENTRY_COUNT } from './limits.js';
import { checkDecodeOptions } from './trailer-checks.js';
import { decodeV2, encodeV2 } from './trailer-v2.js';
import { decodeV3, type EncodeOptionsV3, encodeV3 } from './trailer-v3.js';
import type { DecodeOptions, Trailer, XpwcEntryV2, XpwcEntryV3 } from './types.js';

/**
 * Decodes and validates the trailer that ends at `fileSize`.
 *
 * `bytes` is a suffix of the file: its last byte is at `fileSize - 1`, and it must reach back
 * at least to `index_start` (read the footer with `readFooter` to learn how much that is; the
 * whole file works too). For a trailer that is not at the end of the file (an older committed
 * v3 trailer), pass its end offset as `fileSize` and bytes ending there.
 *
 * All-or-nothing: any invalid byte rejects the whole trailer with an `XpwcFormatError`, except
 * the v2 defects `options.lenient` tolerates (listed in `TrailerV2.tolerated`).
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
  const { expectedIdentity, lenient, crc32c = crc32cOf } = checkDecodeOptions(options);
  const footer = parseFooter(bytes, end);
  if (footer.version === VERSION_2) return decodeV2(bytes, end, footer, lenient === true);
  return decodeV3(bytes, end, footer, expectedIdentity, crc32c);
}

export interface EncodeOptionsV2 {
  readonly version: 2;
  /** File offset where the trailer will be written (end of the packed data). */
  readonly indexStart: number;
}

export type EncodeOptions = EncodeOptionsV2 | EncodeOptionsV3;

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
  if (options === null || typeof options !== 'object')
    throw invalidArgument('options must be an object');
  const version = options.version ?? VERSION_3;
  if (version !== VERSION_2 && version !== VERSION_3) {
    throw invalidArgument(`can only encode version 2 or 3, not ${String(version)}`);
  }
  if (!Array.isArray(entries)) throw invalidArgument('entries must be an array');
  if (entries.length > MAX_ENTRY_COUNT) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `${entries.length} entries exceed MAX_ENTRY_COUNT (${MAX_ENTRY_COUNT})`,
    );
  }
  if (!isSafeOffset(options.indexStart)) {
    throw invalidArgument('indexStart must be a non-negative safe integer');
  }
  if (version === VERSION_2) return encodeV2(entries as XpwcEntryV2[], options.indexStart);
  return encodeV3(entries as XpwcEntryV3[], options as EncodeOptionsV3);
}
