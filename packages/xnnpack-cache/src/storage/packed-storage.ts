import type { PackingLayout } from '@memlayer/cache-format';
import type { CacheMemoryStats } from './memory-stats.js';

/**
 * The seam between the weights cache and where packed bytes live. The cache never
 * knows whether a region is heap memory or a page of a mapped file: it only reserves,
 * releases, syncs and persists through this interface.
 */

/** A writable range of packed bytes owned by a storage. */
export interface PackedRegion {
  /**
   * Exactly the requested number of bytes; `byteOffset` is a multiple of
   * PACKED_ALLOCATION_ALIGNMENT within its ArrayBuffer, so a Float32Array view fits.
   * File-backed regions start on a page boundary of the file.
   */
  readonly bytes: Uint8Array;
  /** Bytes the storage set aside for this region (>= bytes.byteLength). */
  readonly reservedBytes: number;
  /**
   * True when the bytes are known to be zero already (fresh file pages): the packer may
   * skip its own zero-fill of padding.
   */
  readonly zeroed?: boolean;
}

export interface ReserveOptions {
  /**
   * False when the last look-up was for an unregistered kernel: such entries are
   * never persisted, so a file-backed storage should serve them from the heap.
   */
  readonly persistable: boolean;
}

/** Describes one named entry, both when a storage presents loaded entries and when it persists them. */
export interface StoredEntry {
  readonly name: string;
  readonly seed: number;
  readonly fingerprint: number;
  readonly dataSize: number;
  readonly region: PackedRegion;
  /** Full packing layout (persisted in v3 entries, given back on load; absent = unknown). */
  readonly layout?: StoredLayout;
  /** Live runtimes holding the entry (0 = evictable under a disk budget). */
  readonly refCount?: number;
  /** Monotonic tick of the last use (least recently used entries are evicted first). */
  readonly lastUsed?: number;
}

/** What the cache records of a loaded entry (a decoded index entry has these fields). */
export interface LoadedEntryFields {
  readonly name: string;
  readonly seed: number;
  /** Absent when the file does not keep it (v2): unknown. */
  readonly fingerprint?: number;
  readonly dataSize: number;
  readonly layout?: StoredLayout;
}

/** LoadedEntryFields of every loaded entry as columns (cache-format's EntryColumns fit). */
export interface LoadedEntryColumns {
  /** One per loaded entry: its length is the entries'. */
  readonly names: readonly string[];
  readonly seeds: ArrayLike<number>;
  /** Null when the file does not keep them (v2): unknown. */
  readonly fingerprints: ArrayLike<number> | null;
  readonly dataSizes: ArrayLike<number>;
  /** Per entry its layout or undefined; null when no entry has one. */
  readonly layouts: readonly (StoredLayout | undefined)[] | null;
}

/**
 * The columns of `loaded`: its own when it has them (a file storage's index), else made
 * once from `fields` (a storage that presents entries one by one).
 */
export function loadedColumnsOf(loaded: LoadedEntries): LoadedEntryColumns {
  if (loaded.columns !== undefined) return loaded.columns;
  const n = loaded.length;
  const names = new Array<string>(n);
  const seeds = new Array<number>(n);
  const fingerprints = new Array<number>(n);
  const dataSizes = new Array<number>(n);
  const layouts = new Array<StoredLayout | undefined>(n);
  for (let i = 0; i < n; i++) {
    const fields = loaded.fields(i);
    names[i] = fields.name;
    seeds[i] = fields.seed;
    fingerprints[i] = fields.fingerprint ?? 0;
    dataSizes[i] = fields.dataSize;
    layouts[i] = fields.layout;
  }
  return { names, seeds, fingerprints, dataSizes, layouts };
}

/**
 * The entries a storage loaded, each one's region made when it is first asked for: a warm
 * start records every entry but needs the bytes of an entry only when it reads them.
 */
export interface LoadedEntries {
  readonly length: number;
  /** The fields of entry `i` (a file storage makes the object per call: see `columns`). */
  fields(i: number): LoadedEntryFields;
  /**
   * The same fields as columns, entry `i` at index `i` of each, when the storage holds them
   * so (a file storage's decoded index): the cache then records every entry in one pass
   * over them instead of asking `fields` entry by entry.
   */
  readonly columns?: LoadedEntryColumns | undefined;
  /** The region of entry `i`: made at the first call, the same object at every later one. */
  region(i: number): PackedRegion;
}

/** The packing layout of an entry: cache-format's PackingLayout, as the index stores it. */
export type StoredLayout = PackingLayout;

/** Why packed bytes went to the heap instead of the cache file. */
export type FallbackReason =
  | 'no-path'
  | 'open-failed'
  | 'lock-busy'
  | 'enospc'
  | 'over-budget'
  | 'unnamed'
  | 'not-a-cache'
  | 'foreign-format'
  | 'io-error';

export interface FallbackCount {
  readonly count: number;
  readonly bytes: number;
}

export interface OpenContext {
  /**
   * True when the cache already holds named entries: a file-backed storage must then
   * only re-open for append and never load (and map) the same file a second time.
   */
  readonly hasEntries: boolean;
}

export interface StorageStats {
  /** Bytes of heap regions currently held. */
  readonly heapBytes: number;
  /** Size of the backing file (0 without one). */
  readonly fileBytes: number;
  /** File bytes no index entry points at (old trailers, superseded packs). */
  readonly orphanBytes: number;
  /** Bytes currently mapped from the backing file. */
  readonly mappedBytes: number;
  /** Reservations served from the heap instead of the file, by FallbackReason (file storages). */
  readonly fallback?: Readonly<Record<string, FallbackCount>>;
  /** The disk budget of the backing file (null: none). */
  readonly maxFileBytes?: number | null;
  /** Entries (and their bytes) evicted from the file to stay within the budget. */
  readonly evicted?: { readonly entries: number; readonly bytes: number };
}

export interface PackedStorage {
  /**
   * Called by initializeForRuntime. Returns the entries already present in the
   * storage (e.g. read from a saved index); the cache records them as fromLoad.
   */
  open(context: OpenContext): readonly StoredEntry[];
  /**
   * open() without a StoredEntry or a region per entry up front (the cache prefers it when
   * a storage has it): regions are made as entries are read.
   */
  openLoaded?(context: OpenContext): LoadedEntries;
  /** A region of at least `n` writable, aligned bytes, or null when none can be had. */
  reserve(n: number, options: ReserveOptions): PackedRegion | null;
  /** The cache no longer needs this region (entry freed or reservation unused). */
  release(region: PackedRegion): void;
  /** Make the regions reserved since the previous sync durable (msync); called at finalize. */
  sync(): void;
  /**
   * Save an index covering `entries` (every live named entry) when anything new was
   * reserved since the last save. Returns the names now durable in the storage;
   * the cache marks those entries fromLoad.
   */
  persist(entries: readonly StoredEntry[]): readonly string[];
  /**
   * False when persist() would use no entry now (nothing reserved since the last save and
   * no use order to keep): the cache then calls persist([]) and skips building the list.
   */
  needsEntries?(): boolean;
  /**
   * Called once per reserved region, right after it was packed and inserted: a file
   * storage checksums it while the bytes are hot and may start writing it back.
   */
  seal?(region: PackedRegion, dataSize: number): void;
  /**
   * Makes every sealed region durable and commits the index now (a file storage may
   * otherwise defer that commit to close, process exit or the background).
   */
  flush?(): void;
  /** No entry remains: release every region and close any backing file. */
  close(): void;
  stats(): StorageStats;
  /** Dirty vs clean bytes of the storage's mappings (file-backed storages). */
  memoryStats?(): CacheMemoryStats;
}
