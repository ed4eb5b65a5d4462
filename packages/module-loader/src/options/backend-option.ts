import { describeValue, ModuleLoaderError } from '../errors.js';
import {
  INT_OPTION_MAX,
  INT_OPTION_MIN,
  MAX_OPTION_KEY_BYTES,
  MAX_OPTION_STRING_BYTES,
  utf8ByteLength,
} from './limits.js';

/** The three value types of an ExecuTorch BackendOption. */
export type OptionType = 'boolean' | 'int' | 'string';
export type OptionValue = boolean | number | string;
export type OptionValueOf<T extends OptionType> = T extends 'boolean'
  ? boolean
  : T extends 'int'
    ? number
    : string;

export interface BackendOption {
  key: string;
  value: OptionValue;
}

export function optionTypeOf(value: OptionValue): OptionType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'int';
  return 'string';
}

/** Throws unless `key` is a non-empty string of at most 63 UTF-8 bytes without NUL. */
export function validateOptionKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_KEY',
      `Expected a non-empty string for option key but received ${describeValue(key)}`,
    );
  }
  if (key.includes('\0')) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_KEY',
      `Expected an option key without NUL bytes but received ${JSON.stringify(key.slice(0, 40))} (upstream's C string would end at the NUL)`,
      { field: key },
    );
  }
  const bytes = utf8ByteLength(key);
  if (bytes > MAX_OPTION_KEY_BYTES) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_KEY',
      `Expected an option key of at most ${MAX_OPTION_KEY_BYTES} UTF-8 bytes but received ${bytes} bytes ("${key.slice(0, 20)}…"; upstream would truncate it)`,
      { field: key },
    );
  }
}

/**
 * Throws unless `value` is a boolean, a signed 32-bit integer, or a string of at most
 * 255 UTF-8 bytes without NUL. Upstream silently truncates long strings and stops at a NUL
 * (a packed_cache_path then names another file); we reject both.
 */
export function validateOptionValue(key: string, value: unknown): asserts value is OptionValue {
  if (typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < INT_OPTION_MIN || value > INT_OPTION_MAX) {
      throw new ModuleLoaderError(
        'ERR_OPTION_INVALID_VALUE',
        `Expected a 32-bit signed integer for option "${key}" but received ${describeValue(value)}`,
        { field: key },
      );
    }
    return;
  }
  if (typeof value === 'string') {
    if (value.includes('\0')) {
      throw new ModuleLoaderError(
        'ERR_OPTION_INVALID_VALUE',
        `Expected a string without NUL bytes for option "${key}" but received ${JSON.stringify(value.slice(0, 40))} (upstream's C string would end at the NUL, e.g. another cache path)`,
        { field: key },
      );
    }
    const bytes = utf8ByteLength(value);
    if (bytes > MAX_OPTION_STRING_BYTES) {
      throw new ModuleLoaderError(
        'ERR_OPTION_VALUE_TOO_LONG',
        `Expected a string of at most ${MAX_OPTION_STRING_BYTES} UTF-8 bytes for option "${key}" but received ${bytes} bytes (never truncated)`,
        { field: key },
      );
    }
    return;
  }
  throw new ModuleLoaderError(
    'ERR_OPTION_INVALID_VALUE',
    `Expected a boolean, integer or string for option "${key}" but received ${describeValue(value)}`,
    { field: key },
  );
}
