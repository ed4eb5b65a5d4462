import { invalidArgument, WeightsCacheError } from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';

/**
 * The unpacked tensors of one runtime build: which named data map they come from and the
 * name each view was loaded under (look-ups identify tensors by view identity). A view is
 * held from its load to its release: one map answers both questions, so a warm start pays
 * one insert and one delete per tensor.
 */
export class UnpackedViews {
  #map: NamedDataMap | null = null;
  /** View → registered name, for views loaded during the current build and not released. */
  readonly #names = new Map<object, string>();

  begin(map: NamedDataMap): void {
    if (map === null || typeof map !== 'object') {
      invalidArgument('a NamedDataMap', 'namedDataMap', map);
    }
    this.#map = map;
  }

  load(name: string): TensorView {
    if (typeof name !== 'string') invalidArgument('a string', 'name', name);
    const view = this.#map?.get(name);
    if (view === undefined) {
      // Upstream returns Error::InvalidExternalData here.
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_EXTERNAL_DATA',
        this.#map === null
          ? `Cannot load "${name}": initializeForRuntime was not called with a named data map`
          : `Named data map has no tensor named "${name}"`,
      );
    }
    this.#names.set(view, name);
    return view;
  }

  /** The name a view was loaded under in this build, or undefined (unnamed). */
  nameOf(view: object): string | undefined {
    return this.#names.get(view);
  }

  /**
   * Hands a view of this build back to the map now. A released view is unnamed to later
   * look-ups (its bytes may be gone) until it is loaded again.
   */
  release(view: TensorView): void {
    if (!this.#names.delete(view)) return;
    this.#map?.release?.(view);
  }

  /** Unpacked data does not survive the build: releases what is still held, forgets names. */
  endBuild(): void {
    const map = this.#map;
    if (map?.release !== undefined)
      for (const view of this.#names.keys()) map.release(view as TensorView);
    this.#names.clear();
  }

  /** Forgets everything, the map included (the cache was closed). */
  forget(): void {
    this.#names.clear();
    this.#map = null;
  }
}
