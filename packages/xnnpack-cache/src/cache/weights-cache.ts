import {
  assertNonNegativeInteger,
  describeValue,
  invalidArgument,
  WeightsCacheError,
} from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';
import {
  assertXnnpackRevision,
  DEFAULT_XNNPACK_REVISION,
  type XnnpackRevision,
} from '../packing/xnnpack-revisions.js';
import { FileStorage, type FileStorageOptions } from '../storage/file-storage.js';
import { HeapStorage } from '../storage/heap-storage.js';
import { type CacheMemoryStats, mappingsMemoryStats } from '../storage/memory-stats.js';
import type { PackedRegion, PackedStorage, StoredEntry } from '../storage/packed-storage.js';
import {
  EntryNames,
  type Found,
  HIT,
  MISS,
  matchEntry,
  STALE_LAYOUT,
  STALE_SEED,
  UNNAMED,
} from './entry-match.js';
import { bytesEqual, validateKey } from './key.js';
import type { PackedDataMeta } from './packed-data-meta.js';
import { PackedSlots } from './packed-slots.js';
import { type LookUpKey, NOT_FOUND, type WeightsCacheProvider } from './provider.js';
import type { WeightsCacheStats } from './stats.js';
import { UnpackedViews } from './unpacked-views.js';

export interface XNNWeightsCacheOptions extends Partial<Omit<FileStorageOptions, 'path'>> {
  /** Where packed bytes live; overrides `path`. */
  readonly storage?: PackedStorage;
  /**
   * Cache file: a non-empty path makes the cache file-backed (a FileStorage with the other
   * options); empty or omitted means heap only, no file touched.
   */
  readonly path?: string;
  /**
   * XNNPACK revision whose operator-type numbers seed the operators created through this
   * cache (default '92a7ad50', what ExecuTorch main pins); an operator may override it.
   */
  readonly xnnpackRevision?: XnnpackRevision;
}

/**
 * Packed-weights cache with XNNPACK weights-cache provider semantics, as ExecuTorch's
 * XNNWeightsCache implements them. Entries are keyed by the registered names of the
 * unpacked kernel and bias (content digests when the module loader provides them) and
 * hit only for the same seed, packer fingerprint, packing layout and size; storage of the
 * packed bytes is delegated to a PackedStorage (heap by default).
 */
export class XNNWeightsCache implements WeightsCacheProvider {
  readonly #storage: PackedStorage;
  readonly #xnnpackRevision: XnnpackRevision;
  #finalized = false;
  /** Between initializeForRuntime and finalizeForRuntime/abortRuntime. */
  #building = false;
  readonly #views = new UnpackedViews();
  /** Offset → packed buffer. */
  readonly #slots = new PackedSlots();
  readonly #meta = new Map<string, PackedDataMeta>();
  readonly #entryNames = new EntryNames();
  /** Reservations handed out and not yet inserted, by the bytes object returned. */
  readonly #pending = new Map<Uint8Array, PackedRegion>();
  #lastLookUpUnnamed = false;
  #foundName = '';
  #foundMeta: PackedDataMeta | undefined;
  #tick = 0;
  #hits = 0;
  #misses = 0;
  #seedRejects = 0;
  #layoutRejects = 0;

  constructor(options: XNNWeightsCacheOptions = {}) {
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    this.#xnnpackRevision =
      options.xnnpackRevision === undefined
        ? DEFAULT_XNNPACK_REVISION
        : assertXnnpackRevision(options.xnnpackRevision, 'options.xnnpackRevision');
    this.#storage = options.storage ?? storageFor(options);
  }

  /** The XNNPACK revision operators created through this cache seed for by default. */
  get xnnpackRevision(): XnnpackRevision {
    return this.#xnnpackRevision;
  }

  /** The storage behind this cache (a FileStorage in file-backed mode). */
  get storage(): PackedStorage {
    return this.#storage;
  }

  /** Starts a runtime build: remembers the named data map and clears isFinalized. */
  initializeForRuntime(namedDataMap: NamedDataMap): void {
    this.#views.begin(namedDataMap);
    this.#finalized = false;
    this.#building = true;
    const loaded = this.#storage.open({ hasEntries: this.#meta.size > 0 });
    for (const entry of loaded) this.#addLoaded(entry);
  }

  /**
   * Gets a tensor from the named data map and remembers view → name, so that look-ups
   * keyed by this view find entries by name.
   */
  loadUnpackedData(name: string): TensorView {
    return this.#views.load(name);
  }

  /**
   * The operator is done with this view (packed, or found packed): the named data map
   * may free it now rather than at finalize. A view used again later is released again.
   */
  releaseUnpackedData(view: TensorView): void {
    this.#views.release(view);
  }

  lookUp(key: LookUpKey): number {
    this.#assertBuilding('lookUp');
    const found = this.#find(key);
    if (found === HIT) {
      const meta = this.#foundMeta as PackedDataMeta;
      meta.inCurrentRuntime = true;
      meta.lastUsed = ++this.#tick;
      this.#hits++;
      return meta.offset;
    }
    if (found === STALE_SEED) this.#seedRejects++;
    else if (found === STALE_LAYOUT) this.#layoutRejects++;
    this.#misses++;
    return NOT_FOUND;
  }

  /**
   * Writable bytes for `n` packed bytes (aligned), or null when the storage has none.
   * Storage is told whether the entry can be persisted (the last look-up was named).
   */
  reserveSpace(n: number): Uint8Array | null {
    this.#assertBuilding('reserveSpace');
    assertNonNegativeInteger(n, 'n');
    const region = this.#storage.reserve(n, { persistable: !this.#lastLookUpUnnamed });
    if (region === null) return null;
    this.#pending.set(region.bytes, region);
    return region.bytes;
  }

  /** Whether a buffer from reserveSpace is already zero (fresh file pages). */
  isReservedZeroed(buffer: Uint8Array): boolean {
    return this.#pending.get(buffer)?.zeroed === true;
  }

  /**
   * On a name hit, compares the first `size` bytes with the stored pack: equal ⇒ its
   * offset, different ⇒ NOT_FOUND (out of date). Otherwise appends `packed` (which must
   * come from reserveSpace) and, for a named kernel, records its metadata.
   */
  lookUpOrInsert(key: LookUpKey, packed: Uint8Array | null, size: number): number {
    this.#assertBuilding('lookUpOrInsert');
    const found = this.#find(key);
    const foundMeta = this.#foundMeta;
    // A null buffer follows a hit: nothing was packed, nothing to compare.
    if (packed === null) {
      if (found !== HIT) return NOT_FOUND;
      (foundMeta as PackedDataMeta).inCurrentRuntime = true;
      return (foundMeta as PackedDataMeta).offset;
    }
    if (!(packed instanceof Uint8Array)) invalidArgument('a Uint8Array or null', 'packed', packed);
    assertNonNegativeInteger(size, 'size');
    if (size > packed.byteLength) {
      invalidArgument(`a size of at most ${packed.byteLength} bytes`, 'size', size);
    }

    if (found === HIT) {
      const meta = foundMeta as PackedDataMeta;
      const stored = this.#slots.regionAt(meta.offset).bytes;
      if (size <= stored.byteLength && bytesEqual(packed, stored, size)) {
        meta.inCurrentRuntime = true;
        meta.lastUsed = ++this.#tick;
        return meta.offset;
      }
      return NOT_FOUND;
    }

    const region = this.#pending.get(packed);
    if (region === undefined) {
      invalidArgument('a buffer returned by reserveSpace', 'packed', packed);
    }
    this.#pending.delete(packed);
    if (found === UNNAMED) {
      const offset = this.#slots.push(region, size, null);
      this.#storage.seal?.(region, size);
      return offset;
    }
    const name = this.#foundName;
    const offset = this.#slots.push(region, size, name);
    const meta: PackedDataMeta = {
      offset,
      dataSize: size,
      // A repack under a live name keeps the references of runtimes built on the old
      // pack, so their deletePackedData calls still balance (upstream resets to 0).
      refCount: foundMeta === undefined ? 0 : foundMeta.refCount,
      inCurrentRuntime: true,
      fromLoad: false,
      seed: key.seed,
      fingerprint: key.fingerprint,
      lastUsed: ++this.#tick,
    };
    if (key.layout !== undefined) meta.layout = key.layout;
    if (foundMeta !== undefined) this.#supersede(name, foundMeta);
    this.#meta.set(name, meta);
    this.#storage.seal?.(region, size);
    return offset;
  }

  isFinalized(): boolean {
    return this.#finalized;
  }

  /** The packed bytes at `offset`; valid for as long as the entry lives. */
  offsetToAddr(offset: number): Uint8Array {
    return this.#slots.regionAt(offset).bytes;
  }

  /** No-op: the cache outlives the XNNPACK objects that reference it. */
  deleteCache(): void {}

  /**
   * Ends a runtime build: releases the unpacked views, takes a reference on every entry
   * the build used and returns their names; then syncs and persists through storage.
   */
  finalizeForRuntime(): string[] {
    this.#finalized = true;
    this.#building = false;
    this.#endBuild();

    const names: string[] = [];
    // forEach, not for-of over entries: no [name, meta] pair allocated per entry.
    this.#meta.forEach((meta, name) => {
      if (!meta.inCurrentRuntime) return;
      meta.refCount++;
      meta.inCurrentRuntime = false;
      names.push(name);
    });
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
   * Abandons the runtime build in progress (an operator failed to create): releases its
   * unused reservations and unpacked views at once, frees the entries it packed that no
   * runtime holds, and takes no references. Runtimes finalized earlier stay runnable
   * (isFinalized() is true again); the next build starts with initializeForRuntime.
   * Without a build in progress this does nothing.
   */
  abortRuntime(): void {
    if (!this.#building) return;
    this.#building = false;
    this.#finalized = true;
    this.#endBuild();
    const dropped: string[] = [];
    for (const [name, meta] of this.#meta) {
      if (!meta.inCurrentRuntime) continue;
      meta.inCurrentRuntime = false;
      if (meta.refCount === 0 && !meta.fromLoad) dropped.push(name);
    }
    for (const name of dropped) this.#free(name);
    if (dropped.length > 0 && this.#meta.size === 0) this.#releaseAll();
  }

  /**
   * Makes every packed entry durable and commits the index now, for storages that defer
   * that commit (a no-op on the heap).
   */
  flush(): void {
    this.#storage.flush?.();
  }

  /**
   * Asks storage to save an index of every named entry (a no-op on the heap, and in
   * file mode when nothing new was reserved). Entries made durable become fromLoad.
   * Throws ERR_CACHE_SAVE_FAILED when the file could not be written.
   */
  savePackedIndex(): void {
    // A full hit changed nothing: skip building one entry object per entry.
    if (this.#storage.needsEntries?.() === false) {
      this.#storage.persist([]);
      return;
    }
    const entries: StoredEntry[] = [];
    this.#meta.forEach((meta, name) => {
      const region = this.#slots.regionAt(meta.offset);
      const { seed, fingerprint, dataSize, refCount, layout } = meta;
      const lastUsed = meta.lastUsed ?? 0;
      // Two literal shapes rather than a spread: this runs once per entry on every finalize.
      entries.push(
        layout === undefined
          ? { name, seed, fingerprint, dataSize, region, refCount, lastUsed }
          : { name, seed, fingerprint, dataSize, region, refCount, lastUsed, layout },
      );
    });
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
        this.#slots.releaseSuperseded(name, this.#storage);
        continue;
      }
      this.#free(name);
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
    const { packedBytes, unnamedEntries } = this.#slots.totals();
    const storage = this.#storage.stats();
    return {
      hits: this.#hits,
      misses: this.#misses,
      seedRejects: this.#seedRejects,
      layoutRejects: this.#layoutRejects,
      entries: this.#meta.size,
      unnamedEntries,
      packedBytes,
      heapBytes: storage.heapBytes,
      fileBytes: storage.fileBytes,
      orphanBytes: storage.orphanBytes,
      mappedBytes: storage.mappedBytes,
      ...(storage.fallback === undefined ? {} : { fallback: storage.fallback }),
      ...(storage.maxFileBytes === undefined ? {} : { maxFileBytes: storage.maxFileBytes }),
      ...(storage.evicted === undefined ? {} : { evicted: storage.evicted }),
    };
  }

  /** Dirty vs clean bytes of the cache's file mappings, from /proc/self/smaps. */
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
    this.#entryNames.clear();
    this.#views.forget();
    this.#finalized = false;
    this.#building = false;
    this.#releaseAll();
  }

  /**
   * Creating operators is part of a build: XNNPACK reports an invalid state for a cache
   * that is finalized, so the runtime cannot grow after it was handed out.
   */
  #assertBuilding(what: string): void {
    if (this.#finalized) {
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_STATE',
        `${what} called after finalizeForRuntime: start a new build with initializeForRuntime`,
      );
    }
  }

  /** Releases what a build holds that does not outlive it: unpacked views, unused reservations. */
  #endBuild(): void {
    this.#views.endBuild();
    // Reservations never inserted (duplicate or out-of-date packs) are dead now.
    for (const region of this.#pending.values()) this.#storage.release(region);
    this.#pending.clear();
  }

  /**
   * Classifies a key (see matchEntry); leaves the entry name in #foundName and a named
   * entry in #foundMeta, so no result object is allocated per look-up.
   */
  #find(key: LookUpKey): Found {
    validateKey(key);
    this.#foundMeta = undefined;
    const kernelName = this.#views.nameOf(key.kernel);
    if (kernelName === undefined) {
      this.#lastLookUpUnnamed = true;
      return UNNAMED;
    }
    this.#lastLookUpUnnamed = false;
    const biasName = key.bias === null ? undefined : this.#views.nameOf(key.bias);
    const name = biasName === undefined ? kernelName : this.#entryNames.of(kernelName, biasName);
    this.#foundName = name;
    const meta = this.#meta.get(name);
    if (meta === undefined) return MISS;
    this.#foundMeta = meta;
    return matchEntry(meta, key);
  }

  /**
   * A repack replaced `old` under `name`. Nobody can read the old pack once no runtime
   * holds the name and this build did not use it: release it now (storage accounts the
   * bytes as orphaned); otherwise when the name's references drop to 0.
   */
  #supersede(name: string, old: PackedDataMeta): void {
    if (old.refCount === 0 && !old.inCurrentRuntime) this.#slots.release(old.offset, this.#storage);
    else this.#slots.supersede(name, old.offset);
  }

  /** Frees a named entry (and packs it superseded). */
  #free(name: string): void {
    const meta = this.#meta.get(name);
    if (meta === undefined) return;
    this.#slots.release(meta.offset, this.#storage);
    this.#meta.delete(name);
    this.#slots.releaseSuperseded(name, this.#storage);
  }

  #addLoaded(entry: StoredEntry): void {
    const { name, dataSize, seed, fingerprint, layout, lastUsed } = entry;
    const offset = this.#slots.push(entry.region, dataSize, name);
    // The common loaded entry (a layout, no tick) is one literal: no shape transitions.
    const meta: PackedDataMeta =
      layout === undefined
        ? {
            offset,
            dataSize,
            refCount: 0,
            inCurrentRuntime: false,
            fromLoad: true,
            seed,
            fingerprint,
          }
        : {
            offset,
            dataSize,
            refCount: 0,
            inCurrentRuntime: false,
            fromLoad: true,
            seed,
            fingerprint,
            layout,
          };
    if (lastUsed !== undefined) meta.lastUsed = lastUsed;
    this.#meta.set(name, meta);
  }

  #releaseAll(): void {
    this.#storage.close();
    this.#slots.clear();
    this.#pending.clear();
  }
}

function storageFor(options: XNNWeightsCacheOptions): PackedStorage {
  const { path, storage: _storage, xnnpackRevision: _revision, ...fileOptions } = options;
  if (path === undefined || path === '') return new HeapStorage();
  if (typeof path !== 'string') invalidArgument('a string', 'options.path', path);
  return new FileStorage({ ...fileOptions, path });
}
