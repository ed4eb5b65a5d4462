import { invalidArgument, WeightsCacheError } from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';

/**
 * The unpacked tensors of one runtime build: which named data map they come from and the
 * name each view was loaded under (look-ups identify tensors by view identity). A view is
 * held from its load to its release. An operator holds two at a time (kernel and bias):
 * they sit in two fixed slots, and only views held beyond those go to a map (a map that
 * empties and refills for every operator reallocates its table each time).
 */
export class UnpackedViews {
  #map: NamedDataMap | null = null;
  #view0: object | null = null;
  #name0 = '';
  #view1: object | null = null;
  #name1 = '';
  /** Views held besides the two slots, with their names; a view is in one place only. */
  #more: Map<object, string> | null = null;

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
    this.#hold(view, name);
    return view;
  }

  /** The name a view was loaded under in this build, or undefined (unnamed). */
  nameOf(view: object): string | undefined {
    if (view === this.#view0) return this.#name0;
    if (view === this.#view1) return this.#name1;
    return this.#more?.get(view);
  }

  /**
   * Hands a view of this build back to the map now. A released view is unnamed to later
   * look-ups (its bytes may be gone) until it is loaded again.
   */
  release(view: TensorView): void {
    if (view === this.#view0) this.#view0 = null;
    else if (view === this.#view1) this.#view1 = null;
    else if (this.#more?.delete(view) !== true) return;
    this.#map?.release?.(view);
  }

  /** Unpacked data does not survive the build: releases what is still held, forgets names. */
  endBuild(): void {
    const map = this.#map;
    if (map?.release !== undefined) {
      if (this.#view0 !== null) map.release(this.#view0 as TensorView);
      if (this.#view1 !== null) map.release(this.#view1 as TensorView);
      if (this.#more !== null)
        for (const view of this.#more.keys()) map.release(view as TensorView);
    }
    this.#clear();
  }

  /** Forgets everything, the map included (the cache was closed). */
  forget(): void {
    this.#clear();
    this.#map = null;
  }

  /** The same view loaded again (maps may hand out one object per name) takes the new name. */
  #hold(view: object, name: string): void {
    if (view === this.#view0) this.#name0 = name;
    else if (view === this.#view1) this.#name1 = name;
    else if (this.#more?.has(view) === true) this.#more.set(view, name);
    else if (this.#view0 === null) {
      this.#view0 = view;
      this.#name0 = name;
    } else if (this.#view1 === null) {
      this.#view1 = view;
      this.#name1 = name;
    } else {
      this.#more ??= new Map();
      this.#more.set(view, name);
    }
  }

  #clear(): void {
    this.#view0 = null;
    this.#view1 = null;
    this.#name0 = '';
    this.#name1 = '';
    this.#more = null;
  }
}
