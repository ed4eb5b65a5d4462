import { describeValue, invalidArgument, ModuleLoaderError } from '../errors.js';
import { type BackendOption, validateOptionKey, validateOptionValue } from './backend-option.js';
import { BackendOptions } from './backend-options.js';
import { MAX_BACKEND_ID_BYTES, MAX_BACKENDS, utf8ByteLength } from './limits.js';

export interface BackendOptionsEntry {
  backendId: string;
  options: readonly BackendOption[];
}

/** Read access shared by the caller's map and the Module's owned copy. */
export interface ReadonlyLoadBackendOptionsMap {
  readonly size: number;
  hasOptions(backendId: string): boolean;
  /** The options of `backendId`, or an empty list. */
  getOptions(backendId: string): readonly BackendOption[];
  entryAt(index: number): BackendOptionsEntry;
}

/**
 * Per-backend load-time options (ExecuTorch's LoadBackendOptionsMap), at most 8 backends.
 * Like upstream it does not copy what it is given: it keeps references to the caller's
 * option arrays, so a caller that mutates them later changes this map too. Module.load
 * therefore takes a deep copy (see cloneOptionsMap).
 */
export class LoadBackendOptionsMap implements ReadonlyLoadBackendOptionsMap {
  private readonly entries: { backendId: string; options: BackendOption[] }[] = [];

  get size(): number {
    return this.entries.length;
  }

  /** Sets (or replaces, even when full) the options of one backend. */
  setOptions(backendId: string, options: BackendOptions | BackendOption[]): this {
    validateBackendId(backendId);
    const list = options instanceof BackendOptions ? options.entries : options;
    if (!Array.isArray(list)) {
      invalidArgument('BackendOptions or an array of options', `backend "${backendId}"`, options);
    }
    validateOptionList(list);
    const existing = this.entries.find((entry) => entry.backendId === backendId);
    if (existing) {
      existing.options = list;
      return this;
    }
    if (this.entries.length >= MAX_BACKENDS) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_MAP_FULL',
        `Expected at most ${MAX_BACKENDS} backends in a LoadBackendOptionsMap but received a new id ${describeValue(backendId)}`,
        { field: backendId },
      );
    }
    this.entries.push({ backendId, options: list });
    return this;
  }

  hasOptions(backendId: string): boolean {
    return this.entries.some((entry) => entry.backendId === backendId);
  }

  getOptions(backendId: string): readonly BackendOption[] {
    return this.entries.find((entry) => entry.backendId === backendId)?.options ?? [];
  }

  entryAt(index: number): BackendOptionsEntry {
    return entryAtIndex(this.entries, index);
  }
}

export function validateBackendId(backendId: unknown): asserts backendId is string {
  if (typeof backendId !== 'string' || backendId.length === 0) {
    throw new ModuleLoaderError(
      'ERR_BACKEND_ID_INVALID',
      `Expected a non-empty string for backend id but received ${describeValue(backendId)}`,
    );
  }
  if (backendId.includes('\0')) {
    throw new ModuleLoaderError(
      'ERR_BACKEND_ID_INVALID',
      `Expected a backend id without NUL bytes but received ${JSON.stringify(backendId.slice(0, 40))}`,
      { field: backendId },
    );
  }
  const bytes = utf8ByteLength(backendId);
  if (bytes > MAX_BACKEND_ID_BYTES) {
    throw new ModuleLoaderError(
      'ERR_BACKEND_ID_INVALID',
      `Expected a backend id of at most ${MAX_BACKEND_ID_BYTES} bytes but received ${bytes} bytes`,
      { field: backendId },
    );
  }
}

/** Validates every option of a list and rejects a key given twice. */
export function validateOptionList(list: readonly unknown[]): asserts list is BackendOption[] {
  const seen = new Set<string>();
  for (const option of list) {
    if (typeof option !== 'object' || option === null) {
      throw new ModuleLoaderError(
        'ERR_OPTION_INVALID_VALUE',
        `Expected an option object {key, value} but received ${describeValue(option)}`,
      );
    }
    const { key, value } = option as { key: unknown; value: unknown };
    validateOptionKey(key);
    validateOptionValue(key, value);
    if (seen.has(key)) {
      throw new ModuleLoaderError(
        'ERR_OPTION_INVALID_KEY',
        `Expected each option key once in a list but received "${key}" twice`,
        { field: key },
      );
    }
    seen.add(key);
  }
}

/** The entry at `index` of an options map, else ERR_INDEX_OUT_OF_RANGE. */
export function entryAtIndex(
  entries: readonly BackendOptionsEntry[],
  index: number,
): BackendOptionsEntry {
  const entry = Number.isInteger(index) ? entries[index] : undefined;
  if (!entry) {
    throw new ModuleLoaderError(
      'ERR_INDEX_OUT_OF_RANGE',
      `Expected an index in [0, ${entries.length}) for entryAt but received ${describeValue(index)}`,
    );
  }
  return entry;
}
