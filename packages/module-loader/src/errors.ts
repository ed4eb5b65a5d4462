import { expectedButReceived } from '@memlayer/internal';
/**
 * Every code this package throws; tests and callers match on these, never on messages.
 * Scheme: ERR_<SUBJECT>_<PROBLEM> names what was wrong (an option, a backend, the manifest,
 * a path, a file, a method...). Two generic codes have no subject: ERR_INVALID_ARGUMENT is
 * a call made wrongly (a parameter of the wrong type or value, as in @memlayer/device-runner)
 * and ERR_INVALID_INPUT is data given to run (tensors of the wrong count, type or shape).
 */
export const MODULE_LOADER_ERROR_CODES = [
  // calls and run-time data
  'ERR_INVALID_ARGUMENT',
  'ERR_INVALID_INPUT',
  // backend options
  'ERR_OPTION_INVALID_KEY',
  'ERR_OPTION_INVALID_VALUE',
  'ERR_OPTION_VALUE_TOO_LONG',
  'ERR_OPTIONS_FULL',
  'ERR_OPTION_NOT_FOUND',
  'ERR_OPTION_WRONG_TYPE',
  'ERR_BACKEND_ID_INVALID',
  'ERR_BACKEND_MAP_FULL',
  'ERR_INDEX_OUT_OF_RANGE',
  // backends
  'ERR_BACKEND_NOT_REGISTERED',
  'ERR_BACKEND_INIT_FAILED',
  // program files
  'ERR_SAFETENSORS_INVALID',
  'ERR_MANIFEST_INVALID',
  'ERR_PROGRAM_IO',
  'ERR_PATH_INVALID',
  'ERR_PATH_OUTSIDE_PROGRAM',
  'ERR_NOT_A_REGULAR_FILE',
  'ERR_FILE_TOO_LARGE',
  // ExecuTorch programs (.pte, .ptd): malformed, not runnable here, data missing or wrong
  'ERR_PROGRAM_INVALID',
  'ERR_PROGRAM_UNSUPPORTED',
  'ERR_DATA_FILE_REQUIRED',
  'ERR_NAMED_DATA_MISSING',
  'ERR_CONSTANT_MISMATCH',
  // weights: a file changed after it was stat'ed; a weights-cache save failed
  'ERR_WEIGHTS_CHANGED',
  'ERR_WEIGHTS_CACHE_SAVE_FAILED',
  // Module lifecycle (ERR_MODULE_NOT_LOADED is no longer thrown: methods load lazily)
  'ERR_MODULE_NOT_LOADED',
  'ERR_METHOD_NOT_FOUND',
  'ERR_METHOD_NOT_LOADED',
  'ERR_MODULE_DISPOSED',
] as const;

export type ModuleLoaderErrorCode = (typeof MODULE_LOADER_ERROR_CODES)[number];

export interface ModuleLoaderErrorDetails {
  /** File the problem was found in (manifest, safetensors or callable file). */
  file?: string;
  /** Field, key or JSON path the problem concerns. */
  field?: string;
  cause?: unknown;
}

/** The one error class of @memlayer/module-loader. */
export class ModuleLoaderError extends Error {
  readonly code: ModuleLoaderErrorCode;
  readonly file: string | undefined;
  readonly field: string | undefined;

  constructor(
    code: ModuleLoaderErrorCode,
    message: string,
    details: ModuleLoaderErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ModuleLoaderError';
    this.code = code;
    this.file = details.file;
    this.field = details.field;
  }
}

export { describeValue } from '@memlayer/internal';

/** Throws ERR_INVALID_ARGUMENT: "Expected <expected> for <what> but received <value>". */
export function invalidArgument(expected: string, what: string, received: unknown): never {
  throw new ModuleLoaderError(
    'ERR_INVALID_ARGUMENT',
    expectedButReceived(expected, what, received),
  );
}
