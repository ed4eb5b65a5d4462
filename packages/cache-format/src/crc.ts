import { assertBytes, isU32 } from './bytes.js';
import { crc32cUpdate } from './crc32c.js';
import { XpwcFormatError } from './errors.js';

/**
 * CRC32C (Castagnoli) of `bytes`, as an unsigned 32-bit number. Pass the previous result as
 * `previous` to continue over a further chunk: `crc32cOf(b, crc32cOf(a)) === crc32cOf(a ++ b)`.
 */
export function crc32cOf(bytes: Uint8Array, previous?: number): number {
  assertBytes(bytes, 'crc32cOf: bytes');
  if (previous !== undefined && !isU32(previous)) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'crc32cOf: previous must be a u32');
  }
  return crc32cUpdate(previous ?? 0, bytes);
}

/** What `verifyEntryData` needs of an entry (a v3 entry has all of it). */
export interface ChecksummedEntry {
  readonly name?: string;
  readonly fileOffset: number;
  readonly dataSize: number;
  readonly crc32c: number;
}

function checkEntryArgs(entry: ChecksummedEntry, data: Uint8Array): void {
  assertBytes(data, 'entry data');
  if (
    entry === null ||
    typeof entry !== 'object' ||
    !Number.isSafeInteger(entry.dataSize) ||
    entry.dataSize < 0 ||
    !isU32(entry.crc32c)
  ) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'entry must have a dataSize and a crc32c (only v3 entries carry a data CRC)',
    );
  }
}

/**
 * True when the first `entry.dataSize` bytes of `data` (the entry's region, possibly with its
 * page padding) have the entry's CRC32C. Shorter `data` never matches.
 */
export function entryDataMatches(entry: ChecksummedEntry, data: Uint8Array): boolean {
  checkEntryArgs(entry, data);
  if (data.length < entry.dataSize) return false;
  return crc32cOf(data.subarray(0, entry.dataSize)) === entry.crc32c;
}

/**
 * Throws `ERR_XPWC_TRUNCATED` when `data` is shorter than the entry, `ERR_XPWC_CHECKSUM` when
 * its CRC32C differs; the error offset is in the entry's data region.
 */
export function verifyEntryData(entry: ChecksummedEntry, data: Uint8Array): void {
  checkEntryArgs(entry, data);
  const label = entry.name === undefined ? 'entry' : `entry ${JSON.stringify(entry.name)}`;
  const at = Number.isSafeInteger(entry.fileOffset) ? entry.fileOffset : -1;
  if (data.length < entry.dataSize) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `${label}: ${data.length} data bytes given, ${entry.dataSize} needed`,
      at >= 0 ? at + data.length : -1,
    );
  }
  const actual = crc32cOf(data.subarray(0, entry.dataSize));
  if (actual !== entry.crc32c) {
    throw new XpwcFormatError(
      'ERR_XPWC_CHECKSUM',
      `${label}: data CRC32C is 0x${actual.toString(16).padStart(8, '0')}, ` +
        `index says 0x${entry.crc32c.toString(16).padStart(8, '0')}`,
      at,
    );
  }
}
