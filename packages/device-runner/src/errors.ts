import { expectedButReceived } from '@memlayer/internal';
/**
 * Every code a DeviceRunnerError can carry; tests and callers match on these, never on
 * messages. One scheme: `ERR_` + area + what went wrong.
 */
export const DEVICE_RUNNER_ERROR_CODES = [
  // arguments
  'ERR_INVALID_ARGUMENT',
  // ChipCallable / CoreCallable layout (building or parsing untrusted bytes)
  'ERR_BUFFER_TOO_SMALL',
  'ERR_SIZE_MISMATCH',
  'ERR_SIG_COUNT_OUT_OF_RANGE',
  'ERR_BAD_SIGNATURE',
  'ERR_CHILD_COUNT_OUT_OF_RANGE',
  'ERR_NAME_NOT_TERMINATED',
  'ERR_NAME_LENGTH_MISMATCH',
  'ERR_NAME_CONTAINS_NUL',
  'ERR_ORCH_OUT_OF_RANGE',
  'ERR_CHILD_OUT_OF_RANGE',
  'ERR_CHILD_OVERLAPS_ORCH',
  'ERR_CHILDREN_OVERLAP',
  'ERR_CHILD_MISALIGNED',
  // ELF
  'ERR_ELF_INVALID',
  'ERR_ELF_LIMIT_EXCEEDED',
  'ERR_ELF_NOT_SHARED_OBJECT',
  'ERR_ELF_SYMBOL_NOT_FOUND',
  'ERR_ELF_UNRESOLVED_SYMBOL',
  'ERR_ORCH_ENTRY_NAME_EMPTY',
  // simulated device
  'ERR_DEVICE_OUT_OF_MEMORY',
  'ERR_DEVICE_ALLOC_FAILED',
  'ERR_DEVICE_COPY_FAILED',
  'ERR_DEVICE_FREE_FAILED',
  'ERR_DEVICE_BAD_ADDRESS',
  'ERR_DEVICE_LOST',
  // runner
  'ERR_CALLABLE_ID_OUT_OF_RANGE',
  'ERR_CALLABLE_ALREADY_REGISTERED',
  'ERR_CALLABLE_NOT_REGISTERED',
  'ERR_EMPTY_ORCHESTRATION',
  'ERR_FUNC_ID_OUT_OF_RANGE',
  'ERR_RUN_IN_FLIGHT',
  'ERR_AICPU_LOAD_FAILED',
  'ERR_HOST_LOAD_FAILED',
] as const;

export type DeviceRunnerErrorCode = (typeof DEVICE_RUNNER_ERROR_CODES)[number];

/** The one error class of this package; `code` is stable, `message` is for humans. */
export class DeviceRunnerError extends Error {
  readonly code: DeviceRunnerErrorCode;

  constructor(code: DeviceRunnerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DeviceRunnerError';
    this.code = code;
  }
}

export { describeValue } from '@memlayer/internal';

export function invalidArgument(expected: string, what: string, received: unknown): never {
  throw new DeviceRunnerError(
    'ERR_INVALID_ARGUMENT',
    expectedButReceived(expected, what, received),
  );
}
