import { invalidArgument, WeightsCacheError } from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';

/**
 * The unpacked tensors of one runtime build: which named data map they come from, the
 * name each view was loaded under (look-ups identify tensors by view identity), and which
 * views are still held.
 */
export class UnpackedViews {
  #map: NamedDataMap | null = null;
  /** View → registered name, for views loaded during the current build. */
  readonly #names = new Map<object, string>();
  /** Views loaded during the build and not released yet. */
  readonly #live = new Set<TensorView>();

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
    this.#live.add(view);
    this.#names.set(view, name);
    return view;
  }

  /** The name a view was loaded under in this build, or undefined (unnamed). */
  nameOf(view: object): string | undefined {
    return this.#names.get(view);
  }

  /** Hands a view of this build back to the map now (it may be loaded and released again). */
  release(view: TensorView): void {
    if (!this.#names.has(view)) return;
    this.#live.delete(view);
    this.#map?.release?.(view);
  }

  /** Unpacked data does not survive the build: releases what is still held, forgets names. */
  endBuild(): void {
    for (const view of this.#live) this.#map?.release?.(view);
    this.#live.clear();
    this.#names.clear();
  }

  /** Forgets everything, the map included (the cache was closed). */
  forget(): void {
    this.#live.clear();
    this.#names.clear();
    this.#map = null;
  }
}
