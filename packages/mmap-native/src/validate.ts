// Argument validation, done on the JavaScript side so messages say exactly
// "Expected X for Y but received Z" (the style of sharp and Node's ERR_INVALID_ARG_*).
import { inspect } from 'node:util';

/** A file offset or size: a safe integer or a bigint up to 2^63-1 (off_t). */
export type FileOffset = number | bigint;

const MAX_OFF_T = 2n ** 63n - 1n;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return `function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    return name ? `an instance of ${name}` : inspect(value, { depth: 0 });
  }
  return `${typeof value} ${inspect(value)}`;
}

function fail(kind: 'type' | 'range', expected: string, name: string, value: unknown): never {
  const message = `Expected ${expected} for ${name} but received ${describe(value)}`;
  throw kind === 'type' ? new TypeError(message) : new RangeError(message);
}

/** Non-negative 64-bit integer given as number (<= 2^53-1) or bigint (<= 2^63-1). */
export function expectOffset(value: unknown, name: string): FileOffset {
  const expected = 'a non-negative integer (number up to 2^53-1 or bigint up to 2^63-1)';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) fail('range', expected, name, value);
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 0n || value > MAX_OFF_T) fail('range', expected, name, value);
    return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }
  return fail('type', expected, name, value);
}

/** A byte count inside one ArrayBuffer: 1..max, as number or bigint; returned as number. */
export function expectLength(value: unknown, name: string, max: number, min = 1): number {
  const expected = `an integer between ${min} and ${max}`;
  if (typeof value === 'bigint') {
    if (value < BigInt(min) || value > BigInt(max)) fail('range', expected, name, value);
    return Number(value);
  }
  if (typeof value !== 'number') fail('type', expected, name, value);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    fail('range', expected, name, value);
  }
  return value;
}

export function expectBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') fail('type', 'a boolean', name, value);
  return value;
}

export function expectString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    fail('type', 'a non-empty string', name, value);
  }
  return value;
}

export function expectOneOf<T extends string>(
  value: unknown,
  name: string,
  options: readonly T[],
): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
    fail('type', `one of ${options.map((o) => `'${o}'`).join(', ')}`, name, value);
  }
  return value as T;
}

export function expectObject(value: unknown, name: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) fail('type', 'an object', name, value);
  return value as Record<string, unknown>;
}

export function expectPermissions(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o7777) {
    fail('range', 'an integer file mode between 0 and 0o7777', name, value);
  }
  return value;
}
