import { XpwcFormatError } from './errors.js';
import { MAX_FILE_SIZE } from './limits.js';

const TWO_32 = 0x1_0000_0000;
/** Largest high word of a u64 whose value is still <= 2^53 - 1. */
const MAX_SAFE_HIGH_WORD = 0x1f_ffff;

/** A DataView over exactly the bytes of `bytes`. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Little-endian u64 as a number. Values above 2^53 - 1 come back as `Infinity`, which every
 * bounds comparison in the decoders treats as "too large", so no BigInt is needed per entry.
 */
export function readU64(dv: DataView, at: number): number {
  const lo = dv.getUint32(at, true);
  const hi = dv.getUint32(at + 4, true);
  if (hi > MAX_SAFE_HIGH_WORD) return Number.POSITIVE_INFINITY;
  return hi * TWO_32 + lo;
}

/** Writes a safe non-negative integer as a little-endian u64. */
export function writeU64(dv: DataView, at: number, value: number): void {
  dv.setUint32(at, value >>> 0, true);
  dv.setUint32(at + 4, Math.floor(value / TWO_32), true);
}

export function assertBytes(bytes: unknown, what: string): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', `${what} must be a Uint8Array`);
  }
}

/** Validates a file size (or trailer end) given as number or bigint; returns it as a number. */
export function toFileSize(value: unknown, what = 'fileSize'): number {
  if (typeof value === 'bigint') {
    if (value < 0n) {
      throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', `${what} must not be negative`);
    }
    if (value > BigInt(MAX_FILE_SIZE)) {
      throw new XpwcFormatError(
        'ERR_XPWC_LIMIT',
        `${what} ${value} exceeds MAX_FILE_SIZE (2^53 - 1)`,
      );
    }
    return Number(value);
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      throw new XpwcFormatError(
        'ERR_XPWC_INVALID_ARGUMENT',
        `${what} must be a non-negative integer, got ${value}`,
      );
    }
    if (value > MAX_FILE_SIZE) {
      throw new XpwcFormatError(
        'ERR_XPWC_LIMIT',
        `${what} ${value} exceeds MAX_FILE_SIZE (2^53 - 1)`,
      );
    }
    return value;
  }
  throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', `${what} must be a number or a bigint`);
}

export function isSafeOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff;
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * Decodes `bytes[start, end)` as strict UTF-8 (a BOM is kept, never stripped, so the identity
 * round trips byte for byte). `fileOffset` is the absolute offset of `bytes[start]`, for errors.
 * (TextDecoder is faster here than any ASCII fast path in JS, measured on Node 20.)
 */
export function decodeUtf8(
  bytes: Uint8Array,
  start: number,
  end: number,
  fileOffset: number,
  what: string,
): string {
  let slice = bytes.subarray(start, end);
  // TextDecoder refuses views of a SharedArrayBuffer in some runtimes; copy those.
  if (typeof SharedArrayBuffer !== 'undefined' && slice.buffer instanceof SharedArrayBuffer) {
    slice = slice.slice();
  }
  try {
    return utf8Decoder.decode(slice);
  } catch (cause) {
    throw new XpwcFormatError('ERR_XPWC_BAD_UTF8', `${what} is not valid UTF-8`, fileOffset, {
      cause,
    });
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Encodes a string as UTF-8, refusing lone surrogates (TextEncoder would silently replace them
 * with U+FFFD and the round trip would change the identity). `maxBytes` is checked before encoding
 * when the string is obviously too long (UTF-8 never uses fewer bytes than UTF-16 code units).
 */
export function encodeUtf8(
  value: unknown,
  maxBytes: number,
  what: string,
  limitName: string,
): Uint8Array {
  if (typeof value !== 'string') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', `${what} must be a string`);
  }
  if (value.length > maxBytes) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `${what} is longer than ${limitName} (${maxBytes} bytes)`,
    );
  }
  if (LONE_SURROGATE.test(value)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `${what} contains a lone UTF-16 surrogate and has no UTF-8 form`,
    );
  }
  const encoded = utf8Encoder.encode(value);
  if (encoded.length > maxBytes) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `${what} is ${encoded.length} UTF-8 bytes, more than ${limitName} (${maxBytes})`,
    );
  }
  return encoded;
}
