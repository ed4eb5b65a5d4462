import { ModuleLoaderError } from '../errors.js';
import type { BackendOption, OptionType, OptionValueOf } from './backend-option.js';
import { getTypedOption } from './backend-options.js';
import { MAX_BACKENDS } from './limits.js';
import {
  type BackendOptionsEntry,
  entryAtIndex,
  type ReadonlyLoadBackendOptionsMap,
  validateBackendId,
  validateOptionList,
} from './load-backend-options-map.js';

/**
 * An immutable deep copy of a LoadBackendOptionsMap: what a Module owns after load
 * (ExecuTorch PR #19673). Nothing the caller does to the source afterwards reaches it.
 */
export class OwnedOptionsMap implements ReadonlyLoadBackendOptionsMap {
  private readonly entries: readonly BackendOptionsEntry[];

  private constructor(entries: readonly BackendOptionsEntry[]) {
    this.entries = entries;
  }

  static readonly EMPTY = new OwnedOptionsMap(Object.freeze([]));

  /**
   * Validates and copies every entry and option. Re-validates because the caller may
   * have mutated its arrays since setOptions checked them.
   */
  static copyOf(source: ReadonlyLoadBackendOptionsMap | undefined): OwnedOptionsMap {
    if (source === undefined || source.size === 0) return OwnedOptionsMap.EMPTY;
    if (source.size > MAX_BACKENDS) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_MAP_FULL',
        `Expected at most ${MAX_BACKENDS} backends in an options map but received ${source.size}`,
      );
    }
    const copies: BackendOptionsEntry[] = [];
    for (let index = 0; index < source.size; index++) {
      const entry = source.entryAt(index);
      validateBackendId(entry.backendId);
      validateOptionList(entry.options);
      const options = entry.options.map((option) =>
        Object.freeze({ key: option.key, value: option.value }),
      );
      copies.push(Object.freeze({ backendId: entry.backendId, options: Object.freeze(options) }));
    }
    return new OwnedOptionsMap(Object.freeze(copies));
  }

  get size(): number {
    return this.entries.length;
  }

  hasOptions(backendId: string): boolean {
    return this.entries.some((entry) => entry.backendId === backendId);
  }

  getOptions(backendId: string): readonly BackendOption[] {
    return this.entries.find((entry) => entry.backendId === backendId)?.options ?? [];
  }

  getOption<T extends OptionType>(backendId: string, key: string, type: T): OptionValueOf<T> {
    return getTypedOption(this.getOptions(backendId), key, type);
  }

  entryAt(index: number): BackendOptionsEntry {
    return entryAtIndex(this.entries, index);
  }
}
