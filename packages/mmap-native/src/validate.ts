// Argument validation, done on the JavaScript side so messages say exactly
// "Expected X for Y but received Z" (the style of sharp and Node's ERR_INVALID_ARG_*).
import { expectedButReceived } from '@memlayer/internal';

/** A file offset or size: a safe integer or a bigint up to 2^63-1 (off_t). */
export type FileOffset = number | bigint;

const MAX_OFF_T = 2n ** 63n - 1n;

/** The codes argument errors carry (Node's own names for the same situations). */
export const ARGUMENT_ERROR_CODES = [
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_OUT_OF_RANGE',
] as const;
export type ArgumentErrorCode = (typeof ARGUMENT_ERROR_CODES)[number];

/** A TypeError or RangeError with a `code` from {@link ARGUMENT_ERROR_CODES}. */
export type ArgumentError = (TypeError | RangeError) & { code: ArgumentErrorCode };

// ERR_INVALID_ARG_TYPE: wrong type; ERR_INVALID_ARG_VALUE: right type, value not allowed
// (both TypeError, as in Node); ERR_OUT_OF_RANGE: a number outside its range (RangeError).
export function fail(
  code: ArgumentErrorCode,
  expected: string,
  name: string,
  value: unknown,
): never {
  const message = expectedButReceived(expected, name, value);
  const error = code === 'ERR_OUT_OF_RANGE' ? new RangeError(message) : new TypeError(message);
  throw Object.assign(error, { code });
}

/** Non-negative 64-bit integer given as number (<= 2^53-1) or bigint (<= 2^63-1). */
export function expectOffset(value: unknown, name: string): FileOffset {
  const expected = 'a non-negative integer (number up to 2^53-1 or bigint up to 2^63-1)';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) fail('ERR_OUT_OF_RANGE', expected, name, value);
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > MAX_OFF_T) fail('ERR_OUT_OF_RANGE', expected, name, value);
    return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }
  return fail('ERR_INVALID_ARG_TYPE', expected, name, value);
}

/** A byte count inside one ArrayBuffer: 1..max, as number or bigint; returned as number. */
export function expectLength(value: unknown, name: string, max: number, min = 1): number {
  const expected = `an integer between ${min} and ${max}`;
  if (typeof value === 'bigint') {
    if (value < BigInt(min) || value > BigInt(max)) fail('ERR_OUT_OF_RANGE', expected, name, value);
    return Number(value);
  }
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    fail('ERR_OUT_OF_RANGE', expected, name, value);
  }
  return value;
}

export function expectBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') fail('ERR_INVALID_ARG_TYPE', 'a boolean', name, value);
  return value;
}

export function expectString(value: unknown, name: string): string {
  if (typeof value !== 'string') fail('ERR_INVALID_ARG_TYPE', 'a non-empty string', name, value);
  if (value.length === 0) fail('ERR_INVALID_ARG_VALUE', 'a non-empty string', name, value);
  return value;
}

/** A file path: a non-empty string without NUL (the system call would stop at the NUL). */
export function expectPath(value: unknown, name: string): string {
  const path = expectString(value, name);
  if (path.includes('\0')) fail('ERR_INVALID_ARG_VALUE', 'a path without NUL bytes', name, value);
  return path;
}

/** A wait bound in milliseconds: 0 .. 2^31-1. */
export function expectTimeout(value: unknown, name: string): number {
  const expected = 'a number of milliseconds between 0 and 2147483647';
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!(value >= 0 && value <= 2 ** 31 - 1)) fail('ERR_OUT_OF_RANGE', expected, name, value);
  return value;
}

/** An unsigned 32-bit integer: 0 .. 2^32-1. */
export function expectUint32(value: unknown, name: string): number {
  const expected = 'an integer between 0 and 4294967295';
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    fail('ERR_OUT_OF_RANGE', expected, name, value);
  }
  return value;
}

export function expectUint8Array(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) fail('ERR_INVALID_ARG_TYPE', 'a Uint8Array', name, value);
  return value;
}

export function expectOneOf<T extends string>(
  value: unknown,
  name: string,
  options: readonly T[],
): T {
  const expected = `one of ${options.map((o) => `'${o}'`).join(', ')}`;
  if (typeof value !== 'string') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!(options as readonly string[]).includes(value)) {
    fail('ERR_INVALID_ARG_VALUE', expected, name, value);
  }
  return value as T;
}

export function expectObject(value: unknown, name: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null)
    fail('ERR_INVALID_ARG_TYPE', 'an object', name, value);
  return value as Record<string, unknown>;
}

export function expectArray(value: unknown, name: string): readonly unknown[] {
  if (!Array.isArray(value)) fail('ERR_INVALID_ARG_TYPE', 'an array', name, value);
  return value;
}

export function expectPermissions(value: unknown, name: string): number {
  const expected = 'an integer file mode between 0 and 0o7777';
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!Number.isInteger(value) || value < 0 || value > 0o7777) {
    fail('ERR_OUT_OF_RANGE', expected, name, value);
  }
  return value;
}

export function expectArrayBuffer(value: unknown, name: string): ArrayBuffer {
  if (!(value instanceof ArrayBuffer)) fail('ERR_INVALID_ARG_TYPE', 'an ArrayBuffer', name, value);
  return value;
}

/** An integer min..max given as a number. */
export function expectInteger(value: unknown, name: string, min: number, max: number): number {
  const expected = `an integer between ${min} and ${max}`;
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (!Number.isInteger(value) || value < min || value > max) {
    fail('ERR_OUT_OF_RANGE', expected, name, value);
  }
  return value;
}

export function expectFloat32Array(value: unknown, name: string): Float32Array {
  if (!(value instanceof Float32Array)) fail('ERR_INVALID_ARG_TYPE', 'a Float32Array', name, value);
  return value;
}

/** Any number but NaN (infinities included). */
export function expectNumber(value: unknown, name: string): number {
  const expected = 'a number other than NaN';
  if (typeof value !== 'number') fail('ERR_INVALID_ARG_TYPE', expected, name, value);
  if (Number.isNaN(value)) fail('ERR_OUT_OF_RANGE', expected, name, value);
  return value;
}
