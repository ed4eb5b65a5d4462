import { invalidArgument } from '../../errors.js';

// Range checks for numbers written to fixed-width flatbuffer and header fields: a value
// that does not fit is refused rather than silently wrapped.

export const UINT32_MAX = 0xffff_ffff;
export const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** `value` when it is an integer in [0, 2^32). */
export function u32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > UINT32_MAX) {
    invalidArgument('an integer in [0, 2^32)', what, value);
  }
  return value;
}

/** `value` when it is an integer in [-2^31, 2^31). */
export function i32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
    invalidArgument('an integer in [-2^31, 2^31)', what, value);
  }
  return value;
}

/** `value` when it is an integer in [0, limit]. */
export function uintUpTo(value: number, limit: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > limit) {
    invalidArgument(`an integer in [0, ${limit}]`, what, value);
  }
  return value;
}

/** `value` as a bigint when it is an integer in [0, 2^64). */
export function u64(value: number | bigint, what: string): bigint {
  const big = typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
  if (big < 0n || big > UINT64_MAX) invalidArgument('an integer in [0, 2^64)', what, value);
  return big;
}

/** `value` as a bigint when it is an integer in [-2^63, 2^63). */
export function i64(value: number | bigint, what: string): bigint {
  const big =
    typeof value === 'bigint' ? value : Number.isSafeInteger(value) ? BigInt(value) : null;
  if (big === null || big < -(2n ** 63n) || big >= 2n ** 63n) {
    invalidArgument('an integer in [-2^63, 2^63)', what, value);
  }
  return big;
}

/** A union's type number: members count from 1 (0 is NONE) and a ubyte holds it. */
export function unionType(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 255) {
    invalidArgument('an integer in [1, 255]', what, value);
  }
  return value;
}
