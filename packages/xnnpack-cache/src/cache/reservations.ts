import type { PackedRegion } from '../storage/packed-storage.js';

/**
 * Regions handed out by reserveSpace and not yet inserted, found by the bytes object the
 * packer got. An operator reserves, packs and inserts one region at a time: the latest
 * reservation is kept in a field and only older ones go to a map, so the usual cold layer
 * costs no map insert, look-up and delete.
 */
export class Reservations {
  #latest: PackedRegion | null = null;
  readonly #older = new Map<Uint8Array, PackedRegion>();

  add(region: PackedRegion): void {
    const latest = this.#latest;
    if (latest !== null) this.#older.set(latest.bytes, latest);
    this.#latest = region;
  }

  get(bytes: Uint8Array): PackedRegion | undefined {
    const latest = this.#latest;
    if (latest !== null && latest.bytes === bytes) return latest;
    return this.#older.size === 0 ? undefined : this.#older.get(bytes);
  }

  /** Removes and returns the region of `bytes`, or undefined when it was not reserved here. */
  take(bytes: Uint8Array): PackedRegion | undefined {
    const latest = this.#latest;
    if (latest !== null && latest.bytes === bytes) {
      this.#latest = null;
      return latest;
    }
    if (this.#older.size === 0) return undefined;
    const region = this.#older.get(bytes);
    if (region !== undefined) this.#older.delete(bytes);
    return region;
  }

  /** Hands every outstanding region to `release` and forgets them. */
  drain(release: (region: PackedRegion) => void): void {
    for (const region of this.#older.values()) release(region);
    if (this.#latest !== null) release(this.#latest);
    this.clear();
  }

  clear(): void {
    this.#latest = null;
    this.#older.clear();
  }
}
