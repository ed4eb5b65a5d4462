import { Buffer } from 'node:buffer';
import {
  assertNonNegativeInteger,
  describeValue,
  invalidArgument,
  WeightsCacheError,
} from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';
import { FileStorage, type FileStorageOptions } from '../storage/file-storage.js';
import { HeapStorage } from '../storage/heap-storage.js';
import { type CacheMemoryStats, mappingsMemoryStats } from '../storage/memory-stats.js';
import type { PackedRegion, PackedStorage, StoredEntry } from '../storage/packed-storage.js';
import type { PackedDataMeta } from './packed-data-meta.js';
import { type LookUpKey, NOT_FOUND, type WeightsCacheProvider } from './provider.js';
import type { WeightsCacheStats } from './stats.js';

export interface XNNWeightsCacheOptions extends Partial<Omit<FileStorageOptions, 'path'>> {
  /** Where packed bytes live; overrides `path`. */
  readonly storage?: PackedStorage;
  /**
   * Cache file (spec §3): a non-empty path makes the cache file-backed (a FileStorage with
   * the other options); empty or omitted means heap only, no file touched.
   */
  readonly path?: string;
}

/** One packed buffer; its index in the list is the offset handed out. */
interface PackedSlot {
  readonly region: PackedRegion;
  readonly dataSize: number;
  /** Entry name, or null for an unnamed buffer. */
  readonly name: string | null;
}

type Found =
  | { readonly kind: 'unnamed' }
  | { readonly kind: 'miss'; readonly name: string }
  | { readonly kind: 'stale'; readonly name: string; readonly meta: PackedDataMeta }
  | { readonly kind: 'hit'; readonly name: string; readonly meta: PackedDataMeta };

const U32_MAX = 0xffff_ffff;

/**
 * Packed-weights cache with XNNPACK weights-cache provider semantics, as ExecuTorch's
 * XNNWeightsCache implements them (spec §1, §2). Entries are keyed by the registered
 * names of the unpacked kernel and bias; storage of the packed bytes is delegated to a
 * PackedStorage (heap by default).
 */
export class XNNWeightsCache implements WeightsCacheProvider {
  readonly #storage: PackedStorage;
  #namedDataMap: NamedDataMap | null = null;
  #finalized = false;
  /** Unpacked view → registered name, for views loaded during the current build. */
  readonly #unpackedNames = new Map<object, string>();
  readonly #unpackedViews: TensorView[] = [];
  /** Offset → packed buffer; freed slots become null so other offsets stay valid. */
  #slots: Array<PackedSlot | null> = [];
  readonly #meta = new Map<string, PackedDataMeta>();
  /** Reservations handed out and not yet inserted, by the bytes object returned. */
  readonly #pending = new Map<Uint8Array, PackedRegion>();
  #lastLookUpUnnamed = false;
  #hits = 0;
  #misses = 0;
  #seedRejects = 0;

  constructor(options: XNNWeightsCacheOptions = {}) {
    this.#storage = options.storage ?? storageFor(options);
  }

  /** The storage behind this cache (a FileStorage in file-backed mode). */
  get storage(): PackedStorage {
    return this.#storage;
  }

  /** Starts a runtime build: remembers the named data map and clears isFinalized. */
  initializeForRuntime(namedDataMap: NamedDataMap): void {
    if (namedDataMap === null || typeof namedDataMap !== 'object') {
      invalidArgument('a NamedDataMap', 'namedDataMap', namedDataMap);
    }
    this.#namedDataMap = namedDataMap;
    this.#finalized = false;
    const loaded = this.#storage.open({ hasEntries: this.#meta.size > 0 });
    for (const entry of loaded) this.#addLoaded(entry);
  }

  /**
   * Gets a tensor from the named data map and remembers view → name, so that look-ups
   * keyed by this view find entries by name.
   */
  loadUnpackedData(name: string): TensorView {
    if (typeof name !== 'string') invalidArgument('a string', 'name', name);
    const view = this.#namedDataMap?.get(name);
    if (view === undefined) {
      // Upstream returns Error::InvalidExternalData here.
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_EXTERNAL_DATA',
        this.#namedDataMap === null
          ? `Cannot load "${name}": initializeForRuntime was not called with a named data map`
          : `Named data map has no tensor named "${name}"`,
      );
    }
    this.#unpackedViews.push(view);
    this.#unpackedNames.set(view, name);
    return view;
  }

  lookUp(key: LookUpKey): number {
    const found = this.#find(key);
    if (found.kind === 'hit') {
      found.meta.inCurrentRuntime = true;
      this.#hits++;
      return found.meta.offset;
    }
    if (found.kind === 'stale') this.#seedRejects++;
    this.#misses++;
    return NOT_FOUND;
  }

  /**
   * Writable bytes for `n` packed bytes (aligned), or null when the storage has none.
   * Storage is told whether the entry can be persisted (the last look-up was named).
   */
  reserveSpace(n: number): Uint8Array | null {
    assertNonNegativeInteger(n, 'n');
    const region = this.#storage.reserve(n, { persistable: !this.#lastLookUpUnnamed });
    if (region === null) return null;
    this.#pending.set(region.bytes, region);
    return region.bytes;
  }

  /**
   * On a name hit, compares the first `size` bytes with the stored pack: equal ⇒ its
   * offset, different ⇒ NOT_FOUND (out of date). Otherwise appends `packed` (which must
   * come from reserveSpace) and, for a named kernel, records its metadata.
   */
  lookUpOrInsert(key: LookUpKey, packed: Uint8Array | null, size: number): number {
    const found = this.#find(key);
    // A null buffer follows a hit: nothing was packed, nothing to compare.
    if (packed === null) {
      if (found.kind !== 'hit') return NOT_FOUND;
      found.meta.inCurrentRuntime = true;
      return found.meta.offset;
    }
    if (!(packed instanceof Uint8Array)) invalidArgument('a Uint8Array or null', 'packed', packed);
    assertNonNegativeInteger(size, 'size');
    if (size > packed.byteLength) {
      invalidArgument(`a size of at most ${packed.byteLength} bytes`, 'size', size);
    }

    if (found.kind === 'hit') {
      const stored = this.#slotAt(found.meta.offset).region.bytes;
      if (size <= stored.byteLength && bytesEqual(packed, stored, size)) {
        found.meta.inCurrentRuntime = true;
        return found.meta.offset;
      }
      return NOT_FOUND;
    }

    const region = this.#pending.get(packed);
    if (region === undefined) {
      invalidArgument('a buffer returned by reserveSpace', 'packed', packed);
    }
    this.#pending.delete(packed);
    const offset = this.#slots.length;
    if (found.kind === 'unnamed') {
      this.#slots.push({ region, dataSize: size, name: null });
      return offset;
    }
    this.#slots.push({ region, dataSize: size, name: found.name });
    this.#meta.set(found.name, {
      offset,
      dataSize: size,
      // A repack under a live name keeps the references of runtimes built on the old
      // pack, so their deletePackedData calls still balance (upstream resets to 0).
      refCount: found.kind === 'stale' ? found.meta.refCount : 0,
      inCurrentRuntime: true,
      fromLoad: false,
      seed: key.seed,
      fingerprint: key.fingerprint,
    });
    return offset;
  }

  isFinalized(): boolean {
    return this.#finalized;
  }

  /** The packed bytes at `offset`; valid for as long as the entry lives. */
  offsetToAddr(offset: number): Uint8Array {
    return this.#slotAt(offset).region.bytes;
  }

  /** No-op: the cache outlives the XNNPACK objects that reference it. */
  deleteCache(): void {}

  /**
   * Ends a runtime build: releases the unpacked views, takes a reference on every entry
   * the build used and returns their names; then syncs and persists through storage.
   */
  finalizeForRuntime(): string[] {
    this.#finalized = true;
    for (const view of this.#unpackedViews) this.#namedDataMap?.release?.(view);
    this.#unpackedViews.length = 0;
    this.#unpackedNames.clear();
    // Reservations never inserted (duplicate or out-of-date packs) are dead now.
    for (const region of this.#pending.values()) this.#storage.release(region);
    this.#pending.clear();

    const names: string[] = [];
    for (const [name, meta] of this.#meta) {
      if (!meta.inCurrentRuntime) continue;
      meta.refCount++;
      meta.inCurrentRuntime = false;
      names.push(name);
    }
    this.#storage.sync();
    try {
      this.savePackedIndex();
    } catch (error) {
      // File storage has warned and fallen back to the heap; the runtime keeps working.
      if (!(error instanceof WeightsCacheError && error.code === 'ERR_CACHE_SAVE_FAILED')) {
        throw error;
      }
    }
    return names;
  }

  /**
   * Asks storage to save an index of every named entry (a no-op on the heap, and in
   * file mode when nothing new was reserved). Entries made durable become fromLoad.
   * Throws ERR_CACHE_SAVE_FAILED when the file could not be written.
   */
  savePackedIndex(): void {
    const entries: StoredEntry[] = [];
    for (const [name, meta] of this.#meta) {
      const slot = this.#slotAt(meta.offset);
      entries.push({
        name,
        seed: meta.seed,
        fingerprint: meta.fingerprint,
        dataSize: meta.dataSize,
        region: slot.region,
      });
    }
    for (const name of this.#storage.persist(entries)) {
      const meta = this.#meta.get(name);
      if (meta !== undefined) meta.fromLoad = true;
    }
  }

  /**
   * Drops one reference per name. All names are validated before anything changes
   * (upstream stops at the first unknown name with earlier names already applied).
   * At refCount 0 a fromLoad entry stays; any other entry is freed. When no named
   * entry remains, every buffer (unnamed ones included) is released.
   */
  deletePackedData(names: readonly string[]): void {
    if (!Array.isArray(names)) invalidArgument('an array of names', 'names', names);
    if (!this.#finalized) {
      throw new WeightsCacheError(
        'ERR_CACHE_NOT_FINALIZED',
        'deletePackedData called before finalizeForRuntime',
      );
    }
    for (const name of names) {
      if (typeof name !== 'string' || !this.#meta.has(name)) {
        throw new WeightsCacheError(
          'ERR_CACHE_UNKNOWN_NAME',
          `deletePackedData: no packed entry named ${describeValue(name)}; nothing was deleted`,
        );
      }
    }
    const touched = new Set<string>();
    for (const name of names) {
      const meta = this.#meta.get(name) as PackedDataMeta;
      // Never below 0 (upstream decrements an unsigned counter, which wraps).
      if (meta.refCount > 0) meta.refCount--;
      touched.add(name);
    }
    for (const name of touched) {
      const meta = this.#meta.get(name) as PackedDataMeta;
      if (meta.refCount > 0) continue;
      if (meta.fromLoad) {
        meta.inCurrentRuntime = false;
        continue;
      }
      const slot = this.#slotAt(meta.offset);
      this.#storage.release(slot.region);
      this.#slots[meta.offset] = null;
      this.#meta.delete(name);
    }
    if (this.#meta.size === 0) this.#releaseAll();
  }

  /** Names of all named entries, in insertion order. */
  getPackedDataNames(): string[] {
    return [...this.#meta.keys()];
  }

  /** A copy of an entry's metadata, or undefined. */
  getPackedDataMeta(name: string): Readonly<PackedDataMeta> | undefined {
    const meta = this.#meta.get(name);
    return meta === undefined ? undefined : { ...meta };
  }

  /** Whether the last lookUp was for a kernel without a registered name. */
  get lastLookUpUnnamed(): boolean {
    return this.#lastLookUpUnnamed;
  }

  stats(): WeightsCacheStats {
    let packedBytes = 0;
    let unnamedEntries = 0;
    for (const slot of this.#slots) {
      if (slot === null) continue;
      packedBytes += slot.dataSize;
      if (slot.name === null) unnamedEntries++;
    }
    const storage = this.#storage.stats();
    return {
      hits: this.#hits,
      misses: this.#misses,
      seedRejects: this.#seedRejects,
      entries: this.#meta.size,
      unnamedEntries,
      packedBytes,
      heapBytes: storage.heapBytes,
      fileBytes: storage.fileBytes,
      orphanBytes: storage.orphanBytes,
      mappedBytes: storage.mappedBytes,
    };
  }

  /** Dirty vs clean bytes of the cache's file mappings, from /proc/self/smaps (spec §4.7). */
  memoryStats(): CacheMemoryStats {
    return (
      this.#storage.memoryStats?.() ?? mappingsMemoryStats([], this.#storage.stats().heapBytes)
    );
  }

  /**
   * Releases every packed buffer and closes the storage (and its file). The cache can be
   * used again: the next initializeForRuntime loads the file afresh. Offsets handed out
   * before are invalid afterwards.
   */
  close(): void {
    this.#meta.clear();
    this.#unpackedNames.clear();
    this.#unpackedViews.length = 0;
    this.#namedDataMap = null;
    this.#finalized = false;
    this.#releaseAll();
  }

  #find(key: LookUpKey): Found {
    validateKey(key);
    const kernelName = this.#unpackedNames.get(key.kernel);
    if (kernelName === undefined) {
      this.#lastLookUpUnnamed = true;
      return { kind: 'unnamed' };
    }
    this.#lastLookUpUnnamed = false;
    const biasName = key.bias === null ? undefined : this.#unpackedNames.get(key.bias);
    // Spec §2: kernel name immediately followed by bias name, no separator.
    const name = biasName === undefined ? kernelName : kernelName + biasName;
    const meta = this.#meta.get(name);
    if (meta === undefined) return { kind: 'miss', name };
    // A different seed means another ukernel packed it: treat as a miss and repack.
    // Fingerprint 0 means "unknown" (an entry loaded from a v2 file, which has no
    // fingerprint): only the seed decides, as in ExecuTorch.
    const fingerprintDiffers = meta.fingerprint !== 0 && meta.fingerprint !== key.fingerprint;
    if (meta.seed !== key.seed || fingerprintDiffers) {
      return { kind: 'stale', name, meta };
    }
    return { kind: 'hit', name, meta };
  }

  #addLoaded(entry: StoredEntry): void {
    const offset = this.#slots.length;
    this.#slots.push({ region: entry.region, dataSize: entry.dataSize, name: entry.name });
    this.#meta.set(entry.name, {
      offset,
      dataSize: entry.dataSize,
      refCount: 0,
      inCurrentRuntime: false,
      fromLoad: true,
      seed: entry.seed,
      fingerprint: entry.fingerprint,
    });
  }

  #slotAt(offset: number): PackedSlot {
    const slot = Number.isInteger(offset) ? this.#slots[offset] : undefined;
    if (slot === undefined || slot === null) {
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_OFFSET',
        `Expected the offset of a live packed buffer but received ${describeValue(offset)}`,
      );
    }
    return slot;
  }

  #releaseAll(): void {
    this.#storage.close();
    this.#slots = [];
    this.#pending.clear();
  }
}

function storageFor(options: XNNWeightsCacheOptions): PackedStorage {
  const { path, storage: _storage, ...fileOptions } = options;
  if (path === undefined || path === '') return new HeapStorage();
  if (typeof path !== 'string') invalidArgument('a string', 'options.path', path);
  return new FileStorage({ ...fileOptions, path });
}

function validateKey(key: LookUpKey): void {
  if (key === null || typeof key !== 'object') invalidArgument('a LookUpKey', 'key', key);
  if (!isU32(key.seed)) invalidArgument('a u32', 'key.seed', key.seed);
  if (!isU32(key.fingerprint)) invalidArgument('a u32', 'key.fingerprint', key.fingerprint);
  if (key.kernel === null || typeof key.kernel !== 'object') {
    invalidArgument('an object', 'key.kernel', key.kernel);
  }
  if (key.bias !== null && typeof key.bias !== 'object') {
    invalidArgument('an object or null', 'key.bias', key.bias);
  }
}

function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= U32_MAX;
}

function bytesEqual(a: Uint8Array, b: Uint8Array, size: number): boolean {
  return Buffer.from(a.buffer, a.byteOffset, size).equals(
    Buffer.from(b.buffer, b.byteOffset, size),
  );
}
