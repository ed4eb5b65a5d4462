import { describeValue, WeightsCacheError } from '../errors.js';
import type {
  LoadedEntries,
  LoadedEntryColumns,
  PackedRegion,
  PackedStorage,
} from '../storage/packed-storage.js';

/**
 * The cache's list of packed buffers: an offset handed out is an index into it. Kept as
 * parallel arrays (no object per entry); a freed slot's region becomes null so other
 * offsets stay valid. The slots of loaded entries hold no region until one is asked for
 * (undefined): it comes from the storage's LoadedEntries then. Also remembers packs a
 * repack superseded while a runtime could still read them.
 */
export class PackedSlots {
  #regions: Array<PackedRegion | null | undefined> = [];
  /** Each set of loaded entries whose regions are made on demand, with its first offset. */
  #loadedSets: { readonly start: number; readonly loaded: LoadedEntries }[] = [];
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

  /**
   * Appends a slot per loaded entry (`columns` are `loaded`'s), in order, without their
   * regions; returns the offset of the first.
   */
  pushLoaded(loaded: LoadedEntries, columns: LoadedEntryColumns): number {
    const start = this.#regions.length;
    if (start === 0) this.#adoptLoaded(columns);
    else this.#appendLoaded(columns);
    if (loaded.length > 0) this.#loadedSets.push({ start, loaded });
    return start;
  }

  /**
   * The usual open (no slot yet): columns of the right length written in place. A hole of
   * `#regions` reads as undefined, a loaded slot without its region.
   */
  #adoptLoaded(columns: LoadedEntryColumns): void {
    const n = columns.names.length;
    const sizes = new Array<number>(n);
    const names = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      sizes[i] = columns.dataSizes[i] as number;
      names[i] = columns.names[i] as string;
    }
    this.#regions = new Array<PackedRegion | null | undefined>(n);
    this.#sizes = sizes;
    this.#names = names;
  }

  #appendLoaded(columns: LoadedEntryColumns): void {
    for (let i = 0; i < columns.names.length; i++) {
      this.#regions.push(undefined);
      this.#sizes.push(columns.dataSizes[i] as number);
      this.#names.push(columns.names[i] as string);
    }
  }

  /** The size recorded for a live offset (no region is made), else ERR_CACHE_INVALID_OFFSET. */
  sizeAt(offset: number): number {
    if (!this.#live(offset)) invalidOffset(offset);
    return this.#sizes[offset] as number;
  }

  /** The region at a live offset, else ERR_CACHE_INVALID_OFFSET. */
  regionAt(offset: number): PackedRegion {
    const region = Number.isInteger(offset) ? this.#regions[offset] : null;
    if (region !== undefined && region !== null) return region;
    if (region === undefined && this.#live(offset)) return this.#loadedRegion(offset);
    return invalidOffset(offset);
  }

  /** Gives a slot's region back to storage; the offset stays taken. */
  release(offset: number, storage: PackedStorage): void {
    if (!this.#live(offset)) return;
    storage.release(this.regionAt(offset));
    this.#regions[offset] = null;
  }

  /** Whether `offset` names a slot whose region was not released. */
  #live(offset: number): boolean {
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.#regions.length) return false;
    return this.#regions[offset] !== null;
  }

  /**
   * The region of a loaded slot, made now (a slot without one is always a loaded one). The
   * cache loads once per open, so the set is nearly always the last one.
   */
  #loadedRegion(offset: number): PackedRegion {
    const sets = this.#loadedSets;
    let k = sets.length - 1;
    while ((sets[k] as (typeof sets)[number]).start > offset) k--;
    const { start, loaded } = sets[k] as (typeof sets)[number];
    const region = loaded.region(offset - start);
    this.#regions[offset] = region;
    return region;
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
    this.#loadedSets = [];
    this.#sizes = [];
    this.#names = [];
    this.#superseded.clear();
  }
}

function invalidOffset(offset: unknown): never {
  throw new WeightsCacheError(
    'ERR_CACHE_INVALID_OFFSET',
    `Expected the offset of a live packed buffer but received ${describeValue(offset)}`,
  );
}
