/** Stable codes of every error this package throws; tests and callers match on these. */
export const MODULE_LOADER_ERROR_CODES = [
  'ERR_OPTION_INVALID_KEY',
  'ERR_OPTION_INVALID_VALUE',
  'ERR_OPTION_VALUE_TOO_LONG',
  'ERR_OPTIONS_FULL',
  'ERR_OPTION_NOT_FOUND',
  'ERR_OPTION_WRONG_TYPE',
  'ERR_BACKEND_ID_INVALID',
  'ERR_BACKEND_MAP_FULL',
  'ERR_INDEX_OUT_OF_RANGE',
  'ERR_BACKEND_NOT_REGISTERED',
  'ERR_BACKEND_INIT_FAILED',
  'ERR_SAFETENSORS_INVALID',
  'ERR_MANIFEST_INVALID',
  'ERR_PROGRAM_IO',
  'ERR_MODULE_NOT_LOADED',
  'ERR_METHOD_NOT_FOUND',
  'ERR_METHOD_NOT_LOADED',
  'ERR_INVALID_INPUT',
  'ERR_MODULE_DISPOSED',
  'ERR_PATH_INVALID',
  'ERR_PATH_OUTSIDE_PROGRAM',
  'ERR_NOT_A_REGULAR_FILE',
  'ERR_FILE_TOO_LARGE',
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

/** Short description of a value for "Expected X for Y but received Z" messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    return value.length > 40
      ? `a string of length ${value.length}`
      : `the string ${JSON.stringify(value)}`;
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return `${typeof value} ${String(value)}`;
  }
  return typeof value;
}
