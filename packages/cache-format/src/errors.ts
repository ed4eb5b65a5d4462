/**
 * The one error class of this package. Every failure of a decoder, encoder or helper is an
 * `XpwcFormatError` with a stable string `code` and the byte offset (absolute, in the file)
 * where the problem was found; `-1` when no byte offset applies (a bad argument).
 */
export const XPWC_ERROR_CODES = [
  /** The file (or a structure inside it) ends before the bytes it needs. */
  'ERR_XPWC_TRUNCATED',
  /** The footer's (or header's) magic is not 0x58505743 ("XPWC"). */
  'ERR_XPWC_BAD_MAGIC',
  /** A version this package does not read (anything but 1, 2, 3). */
  'ERR_XPWC_UNSUPPORTED_VERSION',
  /** A version 1 file: it has no per-entry seed, so it is stale and must be rebuilt. */
  'ERR_XPWC_STALE_V1',
  /** `index_start` is not inside the file where the trailer can start. */
  'ERR_XPWC_BAD_INDEX_START',
  /** An entry's `file_offset`/`data_size` reach outside the packed-data region. */
  'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
  /** Bytes between the last index entry (v3: the identity) and the footer. */
  'ERR_XPWC_TRAILING_BYTES',
  /** A CRC32C does not match (trailer, header, commit slot, or entry data). */
  'ERR_XPWC_CHECKSUM',
  /** The v3 cache identity is not the one the reader expects. */
  'ERR_XPWC_IDENTITY_MISMATCH',
  /** A length or count exceeds a named limit (see `limits.ts`). */
  'ERR_XPWC_LIMIT',
  /**
   * The v3 identity is not well-formed UTF-8. Entry names are bytes and never raise it (a name
   * that is not UTF-8 decodes with surrogateescape, see `nameFromBytes`).
   */
  'ERR_XPWC_BAD_UTF8',
  /** A field holds a value the format forbids (reserved bits set, generation 0, ...). */
  'ERR_XPWC_BAD_FIELD',
  /** A v3 file without any usable committed trailer. */
  'ERR_XPWC_NO_COMMIT',
  /** The caller passed fewer bytes than the structure needs (read more, then retry). */
  'ERR_XPWC_SHORT_INPUT',
  /** An argument is not of the accepted type or range. */
  'ERR_XPWC_INVALID_ARGUMENT',
] as const;

export type XpwcErrorCode = (typeof XPWC_ERROR_CODES)[number];

export class XpwcFormatError extends Error {
  override readonly name = 'XpwcFormatError';
  /** Stable machine-readable code. */
  readonly code: XpwcErrorCode;
  /** Absolute file offset where the problem was found, or -1 when none applies. */
  readonly offset: number;

  constructor(code: XpwcErrorCode, message: string, offset = -1, options?: ErrorOptions) {
    super(offset >= 0 ? `${message} (at byte ${offset})` : message, options);
    this.code = code;
    this.offset = offset;
  }
}

/** True when `e` is an `XpwcFormatError` (with the given code, when one is given). */
export function isXpwcFormatError(e: unknown, code?: XpwcErrorCode): e is XpwcFormatError {
  return e instanceof XpwcFormatError && (code === undefined || e.code === code);
}

/** The error for a bad argument (type or range) of an exported function; no file offset applies. */
export function invalidArgument(message: string): XpwcFormatError {
  return new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', message);
}
