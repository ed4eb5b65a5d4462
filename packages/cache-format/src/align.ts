import { alignUp as roundUpTo } from '@memlayer/internal';
import { isSafeOffset } from './bytes.js';
import { XpwcFormatError } from './errors.js';
import { MAX_FILE_SIZE, MAX_PAGE_SIZE } from './limits.js';

/** True for a power of two in [1, MAX_PAGE_SIZE]. */
export function isValidPageSize(page: unknown): page is number {
  return (
    typeof page === 'number' &&
    Number.isInteger(page) &&
    page >= 1 &&
    page <= MAX_PAGE_SIZE &&
    (page & (page - 1)) === 0
  );
}

/**
 * Rounds `n` up to a multiple of `page` (a power of two). Exact for every result up to
 * MAX_FILE_SIZE; larger results are an `ERR_XPWC_LIMIT`.
 */
export function alignUp(n: number, page: number): number {
  // Fast path (every call of a warm start): a small non-negative integer and a power-of-two
  // page, where the shared rounding is exact. Anything else takes the checked path below.
  if (
    (n | 0) === n &&
    n >= 0 &&
    n <= 0x3fff_ffff &&
    (page | 0) === page &&
    page >= 1 &&
    page <= MAX_PAGE_SIZE &&
    (page & (page - 1)) === 0
  ) {
    return roundUpTo(n, page);
  }
  if (!isSafeOffset(n)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `alignUp: n must be a non-negative safe integer, got ${String(n)}`,
    );
  }
  if (!isValidPageSize(page)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `alignUp: page must be a power of two in [1, ${MAX_PAGE_SIZE}], got ${String(page)}`,
    );
  }
  // Division by a power of two is exact in binary floating point, so is the multiplication
  // back as long as the result stays at or below 2^53.
  const aligned = roundUpTo(n, page);
  if (aligned > MAX_FILE_SIZE) {
    throw new XpwcFormatError('ERR_XPWC_LIMIT', `alignUp(${n}, ${page}) exceeds MAX_FILE_SIZE`);
  }
  return aligned;
}

/** True when `n` is a multiple of `page` (a power of two). */
export function isAligned(n: number, page: number): boolean {
  return n % page === 0;
}
