import { expectedButReceived } from '@memlayer/internal';
/** Stable error codes thrown by this package; tests and callers match on these. */
export type WeightsCacheErrorCode =
  | 'ERR_CACHE_BUDGET_CONFLICT'
  | 'ERR_CACHE_COMPACT_FAILED'
  | 'ERR_CACHE_ENTRY_TOO_SMALL'
  | 'ERR_CACHE_INVALID_ARGUMENT'
  | 'ERR_CACHE_INVALID_EXTERNAL_DATA'
  | 'ERR_CACHE_INVALID_OFFSET'
  | 'ERR_CACHE_INVALID_OUTPUT_RANGE'
  | 'ERR_CACHE_INVALID_STATE'
  | 'ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE'
  | 'ERR_CACHE_NOT_FINALIZED'
  | 'ERR_CACHE_OUT_OF_DATE'
  | 'ERR_CACHE_OUT_OF_MEMORY'
  | 'ERR_CACHE_SAVE_FAILED'
  | 'ERR_CACHE_UNKNOWN_NAME';

export class WeightsCacheError extends Error {
  readonly code: WeightsCacheErrorCode;

  constructor(code: WeightsCacheErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WeightsCacheError';
    this.code = code;
  }
}

export { describeValue } from '@memlayer/internal';

export function invalidArgument(expected: string, what: string, received: unknown): never {
  throw new WeightsCacheError(
    'ERR_CACHE_INVALID_ARGUMENT',
    expectedButReceived(expected, what, received),
  );
}

export function assertNonNegativeInteger(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    invalidArgument('a non-negative integer', what, value);
  }
}

export function assertPositiveInteger(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    invalidArgument('a positive integer', what, value);
  }
}
