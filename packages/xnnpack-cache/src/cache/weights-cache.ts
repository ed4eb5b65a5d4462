// The provider protocol of ExecuTorch's XNNWeightsCache in one class (about 460 lines): each
// public method is one step of that protocol and reads best next to the others. What the
// steps share lives beside it: entry columns (entry-table), reservations, unpacked views,
// entry names, packed slots, stats and the options that pick a storage.
import {
  assertNonNegativeInteger,
  describeValue,
  invalidArgument,
  WeightsCacheError,
} from '../errors.js';
import type { NamedDataMap, TensorView } from '../named-data-map.js';
import type { CpuFeaturesDetection } from '../operators/cpuinfo.js';
import { LAST_SETUP, LastOperatorSetup } from '../operators/last-setup.js';
import type { GemmTiling } from '../operators/tiling.js';
import {
  assertXnnpackRevision,
  DEFAULT_XNNPACK_REVISION,
  type XnnpackRevision,
} from '../packing/xnnpack-revisions.js';
import { type CacheMemoryStats, mappingsMemoryStats } from '../storage/memory-stats.js';
import {
  type LoadedEntries,
  loadedColumnsOf,
  type PackedStorage,
  type StoredEntry,
} from '../storage/packed-storage.js';
import { emitCacheWarning } from '../storage/warnings.js';
import { storageFor, type XNNWeightsCacheOptions } from './cache-options.js';
import { CpuTilings } from './cpu-tilings.js';
import {
  AMBIGUOUS,
  EntryNames,
  type Found,
  HIT,
  MISS,
  STALE_LAYOUT,
  STALE_SEED,
  UNNAMED,
} from './entry-match.js';
import { EntryTable, NO_ROW } from './entry-table.js';
import { bytesEqual, validateKey, validateShapeKey } from './key.js';
import type { PackedDataMeta } from './packed-data-meta.js';
import { PackedSlots } from './packed-slots.js';
import {
  type LookUpKey,
  type NamedWeightsCacheProvider,
  NOT_FOUND,
  type PackedShapeKey,
} from './provider.js';
import { Reservations } from './reservations.js';
import { type WeightsCacheStats, weightsCacheStats } from './stats.js';
import { UnpackedViews } from './unpacked-views.js';

/**
 * Packed-weights cache with XNNPACK weights-cache provider semantics, as ExecuTorch's
 * XNNWeightsCache implements them. Entries are keyed by the registered names of the
 * unpacked kernel and bias (content digests when the module loader provides them) and
 * hit only for the same seed, packer fingerprint, packing layout and size; storage of the
 * packed bytes is delegated to a PackedStorage (heap by default).
 */
export class XNNWeightsCache implements NamedWeightsCacheProvider {
  readonly #storage: PackedStorage;
  readonly #xnnpackRevision: XnnpackRevision;
  readonly #tilings: CpuTilings;
  /** The setup of the last operator created over this cache (operator-setup.ts). */
  readonly [LAST_SETUP] = new LastOperatorSetup();
  #finalized = false;
  /** Between initializeForRuntime and finalizeForRuntime/abortRuntime. */
  #building = false;
  readonly #views = new UnpackedViews();
  /** Offset → packed buffer. */
  readonly #slots = new PackedSlots();
  readonly #entries = new EntryTable();
  readonly #entryNames = new EntryNames();
  /** Reservations handed out and not yet inserted, by the bytes object returned. */
  readonly #pending = new Reservations();
  #lastLookUpUnnamed = false;
  /** The frozen shape key lookUpByName checked last. */
  #checkedShapeKey: PackedShapeKey | null = null;
  #foundName = '';
  /** Row of the named entry the last #find saw, or NO_ROW. */
  #foundRow = NO_ROW;
  /** The tensor names of the last named miss, and the entry table's changes count then. */
  #missKernel: string | undefined = undefined;
  #missBias: string | undefined = undefined;
  #missName = '';
  #missChanges = -1;
  #tick = 0;
  #hits = 0;
  #misses = 0;
  #seedRejects = 0;
  #layoutRejects = 0;
  #ambiguousRejects = 0;

  constructor(options: XNNWeightsCacheOptions = {}) {
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    this.#xnnpackRevision =
      options.xnnpackRevision === undefined
        ? DEFAULT_XNNPACK_REVISION
        : assertXnnpackRevision(options.xnnpackRevision, 'options.xnnpackRevision');
    this.#tilings = new CpuTilings(options.cpuFeatures, 'options.cpuFeatures');
    this.#storage = options.storage ?? storageFor(options);
  }

  /** The CPU this cache packs for (options.cpuFeatures, else the running one) and its source. */
  get cpuFeatures(): CpuFeaturesDetection {
    return this.#tilings.detection;
  }

  /**
   * The tiling a layer of `outputChannels` gets when its operator names none: the one
   * XNNPACK 92a7ad50 picks on this cache's CPU, so that ExecuTorch shares the entries.
   */
  gemmTiling(outputChannels: number): GemmTiling {
    return this.#tilings.tiling(outputChannels);
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
    const context = { hasEntries: this.#entries.size > 0 };
    const storage = this.#storage;
    if (storage.openLoaded !== undefined) this.#addLoadedSet(storage.openLoaded(context));
    else for (const entry of storage.open(context)) this.#addLoaded(entry);
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
    if (found === HIT) return this.#useHit(this.#foundRow);
    if (found === STALE_SEED) this.#seedRejects++;
    else if (found === STALE_LAYOUT) this.#layoutRejects++;
    else if (found === AMBIGUOUS && this.#ambiguousRejects++ === 0) {
      emitCacheWarning(
        'MEMLAYER_CACHE_AMBIGUOUS_ENTRY',
        `Entry ${this.#foundName} stores no layout (a v2 file) and another shape has its seed and size: it is packed again rather than trusted`,
      );
    }
    this.#misses++;
    return NOT_FOUND;
  }

  /**
   * lookUp for the tensors `loadUnpackedData(kernelName)` and `(biasName)` would load,
   * without loading them (a warm start that knows its tensors' names reads no weights): the
   * entry's offset on a hit, counted and marked used as lookUp does. Anything else is
   * NOT_FOUND with nothing counted: the caller loads the views and calls lookUp, which
   * counts the miss once.
   */
  lookUpByName(kernelName: string, biasName: string | null, key: PackedShapeKey): number {
    this.#assertBuilding('lookUpByName');
    if (typeof kernelName !== 'string') invalidArgument('a string', 'kernelName', kernelName);
    if (biasName !== null && typeof biasName !== 'string') {
      invalidArgument('a string or null', 'biasName', biasName);
    }
    // Layers of one shape share their key object: a frozen one is checked once, while it
    // stays the last one asked for (it cannot have changed since).
    if (key !== this.#checkedShapeKey) {
      validateShapeKey(key);
      this.#checkedShapeKey = Object.isFrozen(key) ? key : null;
    }
    const entries = this.#entries;
    const name = biasName === null ? kernelName : this.#entryNames.of(kernelName, biasName);
    const row = entries.find(name);
    if (row === NO_ROW || entries.match(row, key) !== HIT) return NOT_FOUND;
    this.#lastLookUpUnnamed = false;
    return this.#useHit(row);
  }

  /** A look-up hit on `row`: counted, marked used by this build; its offset. */
  #useHit(row: number): number {
    this.#entries.use(row, ++this.#tick);
    this.#hits++;
    return this.#entries.offset(row);
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
    this.#pending.add(region);
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
    const entries = this.#entries;
    const foundRow = this.#foundRow;
    // A null buffer follows a hit: nothing was packed, nothing to compare.
    if (packed === null) {
      if (found !== HIT) return NOT_FOUND;
      entries.setInCurrentRuntime(foundRow, true);
      return entries.offset(foundRow);
    }
    if (!(packed instanceof Uint8Array)) invalidArgument('a Uint8Array or null', 'packed', packed);
    assertNonNegativeInteger(size, 'size');
    if (size > packed.byteLength) {
      invalidArgument(`a size of at most ${packed.byteLength} bytes`, 'size', size);
    }

    if (found === HIT) {
      const offset = entries.offset(foundRow);
      const stored = this.#slots.regionAt(offset).bytes;
      if (size <= stored.byteLength && bytesEqual(packed, stored, size)) {
        entries.use(foundRow, ++this.#tick);
        return offset;
      }
      return NOT_FOUND;
    }

    const region = this.#pending.take(packed);
    if (region === undefined) {
      invalidArgument('a buffer returned by reserveSpace', 'packed', packed);
    }
    if (found === UNNAMED) {
      const offset = this.#slots.push(region, size, null);
      this.#storage.seal?.(region, size);
      return offset;
    }
    const name = this.#foundName;
    const offset = this.#slots.push(region, size, name);
    // A repack under a live name keeps the references of runtimes built on the old pack,
    // so their deletePackedData calls still balance (upstream resets to 0).
    const refCount = foundRow === NO_ROW ? 0 : entries.refCount(foundRow);
    if (foundRow !== NO_ROW) this.#supersede(name, foundRow);
    entries.add(
      name,
      offset,
      size,
      key.seed,
      key.fingerprint,
      key.layout,
      refCount,
      false,
      true,
      ++this.#tick,
      foundRow,
    );
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

  /** The size of the packed data at `offset` (what was inserted or loaded), without its bytes. */
  packedSizeAt(offset: number): number {
    return this.#slots.sizeAt(offset);
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

    const names = this.#entries.takeReferences();
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
    const dropped = this.#entries.leaveRuntime();
    for (const name of dropped) this.#free(name);
    if (dropped.length > 0 && this.#entries.size === 0) this.#releaseAll();
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
    const table = this.#entries;
    const slots = this.#slots;
    const entries = table.storedEntries((offset) => slots.regionAt(offset));
    for (const name of this.#storage.persist(entries)) {
      const row = table.rowOf(name);
      if (row !== NO_ROW) table.setFromLoad(row);
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
    const entries = this.#entries;
    for (const name of names) {
      if (typeof name !== 'string' || !entries.has(name)) {
        throw new WeightsCacheError(
          'ERR_CACHE_UNKNOWN_NAME',
          `deletePackedData: no packed entry named ${describeValue(name)}; nothing was deleted`,
        );
      }
    }
    for (const name of entries.dropReferences(names)) {
      const row = entries.rowOf(name);
      if (entries.refCount(row) > 0) continue;
      if (entries.fromLoad(row)) {
        entries.setInCurrentRuntime(row, false);
        this.#slots.releaseSuperseded(name, this.#storage);
        continue;
      }
      this.#free(name);
    }
    if (entries.size === 0) this.#releaseAll();
  }

  /** Names of all named entries, in insertion order. */
  getPackedDataNames(): string[] {
    return this.#entries.names();
  }

  /** A copy of an entry's metadata, or undefined. */
  getPackedDataMeta(name: string): Readonly<PackedDataMeta> | undefined {
    const row = typeof name === 'string' ? this.#entries.rowOf(name) : NO_ROW;
    return row === NO_ROW ? undefined : this.#entries.meta(row);
  }

  /** Whether the last lookUp was for a kernel without a registered name. */
  get lastLookUpUnnamed(): boolean {
    return this.#lastLookUpUnnamed;
  }

  stats(): WeightsCacheStats {
    return weightsCacheStats(
      {
        hits: this.#hits,
        misses: this.#misses,
        seedRejects: this.#seedRejects,
        layoutRejects: this.#layoutRejects,
        ambiguousRejects: this.#ambiguousRejects,
        entries: this.#entries.size,
      },
      this.#slots.totals(),
      this.#storage.stats(),
    );
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
    this.#entries.clear();
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
    this.#pending.drain((region) => this.#storage.release(region));
  }

  /**
   * Classifies a key (see EntryTable.match); leaves the entry name in #foundName and a
   * named entry's row in #foundRow, so no result object is allocated per look-up.
   */
  #find(key: LookUpKey): Found {
    validateKey(key);
    this.#foundRow = NO_ROW;
    const kernelName = this.#views.nameOf(key.kernel);
    if (kernelName === undefined) {
      this.#lastLookUpUnnamed = true;
      return UNNAMED;
    }
    this.#lastLookUpUnnamed = false;
    const biasName = key.bias === null ? undefined : this.#views.nameOf(key.bias);
    const entries = this.#entries;
    // A miss's lookUp and the lookUpOrInsert after it ask for the same pair: compare the
    // (flat) tensor names rather than probe the map again with the concatenation.
    if (
      kernelName === this.#missKernel &&
      biasName === this.#missBias &&
      entries.changes === this.#missChanges
    ) {
      this.#foundName = this.#missName;
      return MISS;
    }
    const name = biasName === undefined ? kernelName : this.#entryNames.of(kernelName, biasName);
    this.#foundName = name;
    const row = entries.find(name);
    if (row === NO_ROW) {
      this.#missKernel = kernelName;
      this.#missBias = biasName;
      this.#missName = name;
      this.#missChanges = entries.changes;
      return MISS;
    }
    this.#foundRow = row;
    return entries.match(row, key);
  }

  /**
   * A repack replaced `old` under `name`. Nobody can read the old pack once no runtime
   * holds the name and this build did not use it: release it now (storage accounts the
   * bytes as orphaned); otherwise when the name's references drop to 0.
   */
  #supersede(name: string, oldRow: number): void {
    const entries = this.#entries;
    const offset = entries.offset(oldRow);
    if (entries.refCount(oldRow) === 0 && !entries.inCurrentRuntime(oldRow)) {
      this.#slots.release(offset, this.#storage);
    } else {
      this.#slots.supersede(name, offset);
    }
  }

  /** Frees a named entry (and packs it superseded). */
  #free(name: string): void {
    const row = this.#entries.rowOf(name);
    if (row === NO_ROW) return;
    this.#slots.release(this.#entries.offset(row), this.#storage);
    this.#entries.delete(name);
    this.#slots.releaseSuperseded(name, this.#storage);
  }

  #addLoaded(entry: StoredEntry): void {
    const { name, dataSize } = entry;
    const offset = this.#slots.push(entry.region, dataSize, name);
    this.#entries.add(
      name,
      offset,
      dataSize,
      entry.seed,
      entry.fingerprint,
      entry.layout,
      0,
      true,
      false,
      entry.lastUsed ?? -1,
      NO_ROW,
    );
  }

  /** Records loaded entries as #addLoaded does, their regions left to the storage until read. */
  #addLoadedSet(loaded: LoadedEntries): void {
    const columns = loadedColumnsOf(loaded);
    this.#entries.addLoaded(columns, this.#slots.pushLoaded(loaded, columns));
  }

  #releaseAll(): void {
    this.#storage.close();
    this.#slots.clear();
    this.#pending.clear();
  }
}
