// Bounds every trailer decoder checks before it reads or allocates anything.
import { invalidArgument, XpwcFormatError } from './errors.js';
import { MAX_ENTRY_COUNT, MAX_FILE_SIZE, MAX_TRAILER_BYTES } from './limits.js';
import type { DecodeOptions } from './types.js';

/**
 * Checks that the trailer [indexStart, end) is within MAX_TRAILER_BYTES and that `bytes` (which
 * end at `end`) reach back to `indexStart`. Returns the absolute offset of bytes[0].
 */
export function requireTrailerBytes(bytes: Uint8Array, end: number, indexStart: number): number {
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

export function checkEntryCount(count: number, at: number): void {
  if (count > MAX_ENTRY_COUNT) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `entry_count ${count} exceeds MAX_ENTRY_COUNT (${MAX_ENTRY_COUNT})`,
      at,
    );
  }
}

/** Validates the options every decoding entry point takes. */
export function checkDecodeOptions(options: DecodeOptions): DecodeOptions {
  if (options === null || typeof options !== 'object')
    throw invalidArgument('options must be an object');
  if (options.expectedIdentity !== undefined && typeof options.expectedIdentity !== 'string') {
    throw invalidArgument('expectedIdentity must be a string');
  }
  if (options.lenient !== undefined && typeof options.lenient !== 'boolean') {
    throw invalidArgument('lenient must be a boolean');
  }
  if (options.crc32c !== undefined && typeof options.crc32c !== 'function') {
    throw invalidArgument('crc32c must be a function');
  }
  return options;
}

/** An encoder refuses a trailer a reader would refuse: over MAX_TRAILER_BYTES or past MAX_FILE_SIZE. */
export function checkEncodedTrailerSize(indexStart: number, size: number): void {
  if (size > MAX_TRAILER_BYTES) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `trailer would exceed MAX_TRAILER_BYTES (${MAX_TRAILER_BYTES})`,
    );
  }
  if (indexStart + size > MAX_FILE_SIZE) {
    throw new XpwcFormatError('ERR_XPWC_LIMIT', 'trailer would end beyond MAX_FILE_SIZE');
  }
}
