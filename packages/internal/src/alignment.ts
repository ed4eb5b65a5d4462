/**
 * Rounds a non-negative integer up to a multiple of `alignment` (a positive integer).
 * Exact while the result stays a safe integer; callers check their own limits.
 */
export function alignUp(value: number, alignment: number): number {
  // Small values and power-of-two alignments (nearly every call): integer arithmetic.
  if (
    (value | 0) === value &&
    value >= 0 &&
    value <= 0x3fff_ffff &&
    (alignment & (alignment - 1)) === 0 &&
    alignment > 0
  ) {
    const end = value + alignment - 1;
    return end - (end % alignment);
  }
  return Math.ceil(value / alignment) * alignment;
}

/** True when `value` is a multiple of `alignment`. */
export function isAligned(value: number, alignment: number): boolean {
  return value % alignment === 0;
}
