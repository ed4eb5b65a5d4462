import { describeValue, WeightsCacheError } from '../errors.js';
import type { PackedRegion, PackedStorage } from '../storage/packed-storage.js';

/**
 * The cache's list of packed buffers: an offset handed out is an index into it. Kept as
 * parallel arrays (no object per entry); a freed slot's region becomes null so other
 * offsets stay valid. Also remembers packs a repack superseded while a runtime could
 * still read them.
 */
export class PackedSlots {
  #regions: Array<PackedRegion | null> = [];
  #sizes: number[] = [];
  /** Entry name, or null for an unnamed buffer. */
  #names: Array<string | null> = [];
  /** Superseded offsets by entry name, released when the name's references drop to 0. */
  readonly #superseded = new Map<string, number[]>();

  get length(): number {
    return this.#regions.length;
  }

  /** Appends a buffer; returns its offset. */
  push(region: PackedRegion, dataSize: number, name: string | null): number {
    const offset = this.#regions.length;
    this.#regions.push(region);
    this.#sizes.push(dataSize);
    this.#names.push(name);
    return offset;
  }

  /** The region at a live offset, else ERR_CACHE_INVALID_OFFSET. */
  regionAt(offset: number): PackedRegion {
    const region = Number.isInteger(offset) ? this.#regions[offset] : undefined;
    if (region === undefined || region === null) {
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_OFFSET',
        `Expected the offset of a live packed buffer but received ${describeValue(offset)}`,
      );
    }
    return region;
  }

  /** Gives a slot's region back to storage; the offset stays taken. */
  release(offset: number, storage: PackedStorage): void {
    const region = this.#regions[offset];
    if (region === undefined || region === null) return;
    storage.release(region);
    this.#regions[offset] = null;
  }

  supersede(name: string, offset: number): void {
    const offsets = this.#superseded.get(name);
    if (offsets === undefined) this.#superseded.set(name, [offset]);
    else offsets.push(offset);
  }

  releaseSuperseded(name: string, storage: PackedStorage): void {
    const offsets = this.#superseded.get(name);
    if (offsets === undefined) return;
    this.#superseded.delete(name);
    for (const offset of offsets) this.release(offset, storage);
  }

  /** Sum of dataSize over live slots, and how many of them are unnamed. */
  totals(): { packedBytes: number; unnamedEntries: number } {
    let packedBytes = 0;
    let unnamedEntries = 0;
    for (let i = 0; i < this.#regions.length; i++) {
      if (this.#regions[i] === null) continue;
      packedBytes += this.#sizes[i] as number;
      if (this.#names[i] === null) unnamedEntries++;
    }
    return { packedBytes, unnamedEntries };
  }

  /** Forgets every slot (the storage is closed separately). */
  clear(): void {
    this.#regions = [];
    this.#sizes = [];
    this.#names = [];
    this.#superseded.clear();
  }
}
