/**
 * Entry names are byte strings: ExecuTorch's loader copies `name_len` bytes into a
 * std::string (XNNWeightsCache.cpp load_packed_cache) and accepts any bytes. A name that is
 * valid UTF-8 decodes to that text; any other bytes decode losslessly with Python's
 * "surrogateescape" (PEP 383): each byte b >= 0x80 that is not part of a well-formed UTF-8
 * sequence becomes the lone surrogate U+DC00 + b. Well-formed UTF-8 never encodes a surrogate,
 * so an escaped name never equals a valid UTF-8 name, and the encoder maps it back to the
 * same bytes.
 */
import { XpwcFormatError } from './errors.js';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();
const ESCAPE_BASE = 0xdc00;
/** String.fromCharCode takes its arguments on the stack: convert in chunks. */
const CHUNK = 4096;

/** Length of the well-formed UTF-8 sequence at `bytes[i]`, or 0 when there is none (Unicode Table 3-7). */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  if (b0 < 0x80) return 1;
  const n = bytes.length;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const b = bytes[i + k];
    return i + k < n && b !== undefined && b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf; // ED A0..BF would encode a surrogate
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf; // above U+10FFFF otherwise
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

function escapeDecode(bytes: Uint8Array): string {
  const units: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    const b0 = bytes[i] as number;
    if (length === 0) {
      units.push(ESCAPE_BASE + b0);
      i += 1;
      continue;
    }
    let cp = length === 1 ? b0 : b0 & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) cp = (cp << 6) | ((bytes[i + k] as number) & 0x3f);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
    } else units.push(cp);
    i += length;
  }
  let out = '';
  for (let k = 0; k < units.length; k += CHUNK) {
    out += String.fromCharCode(...units.slice(k, k + CHUNK));
  }
  return out;
}

/**
 * Decodes a name's bytes: valid UTF-8 to its text (a BOM is kept), anything else losslessly
 * with surrogateescape. Never throws for any byte content.
 */
export function nameFromBytes(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'nameFromBytes: bytes must be a Uint8Array',
    );
  }
  let view = bytes;
  // TextDecoder refuses views of a SharedArrayBuffer in some runtimes; copy those.
  if (typeof SharedArrayBuffer !== 'undefined' && view.buffer instanceof SharedArrayBuffer) {
    view = view.slice();
  }
  try {
    return utf8Decoder.decode(view);
  } catch {
    return escapeDecode(view);
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;

function escapeEncode(name: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = name.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f));
        out.push(0x80 | (cp & 0x3f));
        i++;
        continue;
      }
    } else if (unit >= 0xdc80 && unit <= 0xdcff) {
      out.push(unit - ESCAPE_BASE);
      continue;
    } else if (unit < 0x80) {
      out.push(unit);
      continue;
    } else if (unit < 0x800) {
      out.push(0xc0 | (unit >> 6), 0x80 | (unit & 0x3f));
      continue;
    } else if (unit < 0xd800 || unit > 0xdfff) {
      out.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f));
      continue;
    }
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `name has a lone surrogate U+${unit.toString(16).toUpperCase()} at ${i}: it stands for no byte (only U+DC80..U+DCFF escape the bytes 0x80..0xff)`,
    );
  }
  return Uint8Array.from(out);
}

/**
 * The bytes of a name: UTF-8, except that U+DC80..U+DCFF (from `nameFromBytes`) become the
 * single bytes 0x80..0xff. `nameFromBytes(nameToBytes(name)) === name` always holds: a name
 * that does not satisfy it (another lone surrogate, or escapes that spell valid UTF-8, which
 * would alias the decoded text) is `ERR_XPWC_INVALID_ARGUMENT`.
 */
export function nameToBytes(name: string): Uint8Array {
  if (typeof name !== 'string') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'nameToBytes: name must be a string');
  }
  if (!SURROGATE.test(name)) return utf8Encoder.encode(name);
  const bytes = escapeEncode(name);
  if (nameFromBytes(bytes) !== name) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'name escapes bytes that form valid UTF-8: use the decoded text instead (two spellings of one name)',
    );
  }
  return bytes;
}

interface Latin1Buffer {
  from(
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number,
  ): {
    toString(encoding: 'latin1', start: number, end: number): string;
  };
}
/** Node's Buffer when present: its latin1 decode is one copy into a one-byte string. */
const NodeBuffer = (globalThis as { Buffer?: Latin1Buffer }).Buffer;

/**
 * `bytes[start, end)` as one string of one character per byte (latin1), or null where the
 * runtime has no fast way to make one. A decoder slices ASCII names out of it: for ASCII
 * bytes latin1 and UTF-8 give the same text, and one decode of the whole index costs less
 * than a TextDecoder call per name.
 */
export function latin1Text(bytes: Uint8Array, start: number, end: number): string | null {
  if (NodeBuffer === undefined) return null;
  return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
    'latin1',
    start,
    end,
  );
}

/** Whether every byte of `bytes[start, end)` is below 0x80 (read 4 bytes at a time). */
export function isAsciiRange(bytes: Uint8Array, dv: DataView, start: number, end: number): boolean {
  let acc = 0;
  let i = start;
  for (; i + 4 <= end; i += 4) acc |= dv.getUint32(i, true);
  for (; i < end; i++) acc |= bytes[i] as number;
  return (acc & 0x80808080) === 0;
}
