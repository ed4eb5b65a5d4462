import { describeValue, invalidArgument, ModuleLoaderError } from '../errors.js';
import {
  type BackendOption,
  type OptionType,
  type OptionValue,
  type OptionValueOf,
  optionTypeOf,
  validateOptionKey,
  validateOptionValue,
} from './backend-option.js';
import { DEFAULT_OPTIONS_CAPACITY } from './limits.js';

/** Read access shared by the builder and the Module's frozen copies. */
export interface ReadonlyBackendOptions {
  readonly size: number;
  has(key: string): boolean;
  getOption<T extends OptionType>(key: string, type: T): OptionValueOf<T>;
  /** The options in insertion order (a fresh array; entries are copies). */
  view(): BackendOption[];
}

/**
 * Options for one backend (ExecuTorch's BackendOptions<N>): setOption replaces an
 * existing key (its type may change) or appends while there is room.
 */
export class BackendOptions implements ReadonlyBackendOptions {
  readonly capacity: number;
  // The entries are the caller-visible objects: LoadBackendOptionsMap stores this
  // builder by reference, as upstream stores a span, so copies are the Module's job.
  readonly entries: BackendOption[] = [];

  constructor(capacity: number = DEFAULT_OPTIONS_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      invalidArgument('a positive integer', 'the BackendOptions capacity', capacity);
    }
    this.capacity = capacity;
  }

  get size(): number {
    return this.entries.length;
  }

  setOption(key: string, value: OptionValue): this {
    validateOptionKey(key);
    validateOptionValue(key, value);
    const existing = this.entries.find((entry) => entry.key === key);
    if (existing) {
      existing.value = value;
      return this;
    }
    if (this.entries.length >= this.capacity) {
      throw new ModuleLoaderError(
        'ERR_OPTIONS_FULL',
        `Expected at most ${this.capacity} options in this BackendOptions but received a new key ${describeValue(key)}`,
        { field: key },
      );
    }
    this.entries.push({ key, value });
    return this;
  }

  has(key: string): boolean {
    return this.entries.some((entry) => entry.key === key);
  }

  getOption<T extends OptionType>(key: string, type: T): OptionValueOf<T> {
    return getTypedOption(this.entries, key, type);
  }

  view(): BackendOption[] {
    return this.entries.map((entry) => ({ key: entry.key, value: entry.value }));
  }
}

/** Looks up `key`; not-found and wrong-type are distinct errors (as upstream's get_option). */
export function getTypedOption<T extends OptionType>(
  entries: readonly BackendOption[],
  key: string,
  type: T,
): OptionValueOf<T> {
  const entry = entries.find((candidate) => candidate.key === key);
  if (!entry) {
    throw new ModuleLoaderError(
      'ERR_OPTION_NOT_FOUND',
      `Expected a key that is set but received ${describeValue(key)}`,
      { field: key },
    );
  }
  const actual = optionTypeOf(entry.value);
  if (actual !== type) {
    throw new ModuleLoaderError(
      'ERR_OPTION_WRONG_TYPE',
      `Expected a ${type} for option "${key}" but it holds a ${actual}`,
      { field: key },
    );
  }
  return entry.value as OptionValueOf<T>;
}
