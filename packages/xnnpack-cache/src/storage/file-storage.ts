import { alignUp, crc32cOf, type XpwcEntry, type XpwcEntryV3 } from '@memlayer/cache-format';
import { type BackendChoice, type Mapping, pageSize } from '@memlayer/mmap-native';
import { PACKED_ALLOCATION_ALIGNMENT } from '../alignment.js';
import { invalidArgument, WeightsCacheError } from '../errors.js';
import { CacheFile } from './cache-file.js';
import { compact } from './compact.js';
import { HeapStorage } from './heap-storage.js';
import { DEFAULT_CACHE_IDENTITY } from './identity.js';
import {
  type CacheFormat,
  type CommittedIndex,
  commitIndex,
  dataStartOf,
  inspectCacheFile,
  readNewestIndex,
  replaceWithFreshFile,
} from './index-io.js';
import { type CacheMemoryStats, mappingsMemoryStats } from './memory-stats.js';
import type {
  OpenContext,
  PackedRegion,
  PackedStorage,
  ReserveOptions,
  StorageStats,
  StoredEntry,
} from './packed-storage.js';
import { emitCacheWarning } from './warnings.js';

export type VerifyMode = 'index' | 'full';

export interface FileStorageOptions {
  /** The cache file; created when missing, never truncated. */
  readonly path: string;
  /**
   * 'index' (default): trust entry data once the trailer's CRC and bounds check out.
   * 'full': also check every entry's data CRC32C at load; a corrupt entry is dropped
   * (and repacked by its operator), never handed to a kernel.
   */
  readonly verify?: VerifyMode;
  /** Cache identity written to and expected in v3 trailers (spec §4.5). */
  readonly identity?: string;
  /**
   * Format of files this storage creates (3 by default; 2 = ExecuTorch-compatible). An
   * existing readable file keeps its format.
   */
  readonly format?: CacheFormat;
  /** mmap-native backend ('auto' by default, or MEMLAYER_MMAP_BACKEND). */
  readonly backend?: BackendChoice;
  /**
   * Compact the file at close when orphan bytes exceed this fraction of it (0 < t <= 1).
   * Off by default.
   */
  readonly autoCompactThreshold?: number;
}

/** Where a packed region lives in the file. */
interface FileRegion {
  readonly file: CacheFile;
  readonly fileOffset: number;
  /** Its own writable mapping, or null when it is part of the shared read-only load map. */
  readonly mapping: Mapping | null;
  synced: boolean;
  /** Referenced by a commit this process made or loaded. */
  committed: boolean;
  /** CRC32C of the data, once known (from the trailer, or computed at the first save). */
  crc32c: number | undefined;
  crcSize: number;
}

export interface FileStorageInfo {
  readonly path: string;
  /** Format of the open file (null before open or after fallback). */
  readonly format: CacheFormat | null;
  /** Generation of the newest v3 commit this process knows (0: none or v2). */
  readonly generation: number;
  readonly fallenBack: boolean;
  /** Entries presented by the last load, and entries dropped by it (bad CRC or alignment). */
  readonly loadedEntries: number;
  readonly droppedEntries: number;
  /** Why the file was last rebuilt (an XpwcFormatError code), or null. */
  readonly rebuiltBecause: string | null;
}

const REPLACED_FILE_RETRIES = 8;

/**
 * Packed bytes in a file mapped MAP_SHARED (spec §3, §4), with the v3 commit protocol of
 * @memlayer/cache-format. Every reservation is a page-aligned region appended at the end of
 * the file, grown with real blocks and mapped on its own; a load maps the committed data
 * once, read-only. The file lock is held only to read the index and map, to grow the file,
 * and to commit, so several processes share one file and each appends what it packed.
 * Any I/O failure turns file mode off for the rest of this storage's life: reservations go
 * to the heap, with a warning, and the runtime keeps working.
 */
export class FileStorage implements PackedStorage {
  readonly #path: string;
  readonly #verify: VerifyMode;
  readonly #identity: string;
  readonly #newFileFormat: CacheFormat;
  readonly #backend: BackendChoice | undefined;
  readonly #autoCompactThreshold: number | undefined;
  readonly #pageSize: number;
  readonly #heap = new HeapStorage();
  #file: CacheFile | null = null;
  #format: CacheFormat = 3;
  #loadMapping: Mapping | null = null;
  /** Files replaced by compaction or a rebuild whose mappings are still in use. */
  #retiredFiles: CacheFile[] = [];
  readonly #regions = new Map<PackedRegion, FileRegion>();
  #committed: CommittedIndex | null = null;
  #fallenBack = false;
  /** A file region was reserved since the last save. */
  #unsaved = false;
  #loadedEntries = 0;
  #droppedEntries = 0;
  #rebuiltBecause: string | null = null;

  constructor(options: FileStorageOptions) {
    if (options === null || typeof options !== 'object') {
      invalidArgument('an options object', 'options', options);
    }
    if (typeof options.path !== 'string' || options.path === '') {
      invalidArgument('a non-empty path', 'options.path', options.path);
    }
    const verify = options.verify ?? 'index';
    if (verify !== 'index' && verify !== 'full') {
      invalidArgument("'index' or 'full'", 'options.verify', verify);
    }
    const format = options.format ?? 3;
    if (format !== 2 && format !== 3) invalidArgument('2 or 3', 'options.format', format);
    const identity = options.identity ?? DEFAULT_CACHE_IDENTITY;
    if (typeof identity !== 'string' || identity === '') {
      invalidArgument('a non-empty string', 'options.identity', identity);
    }
    const threshold = options.autoCompactThreshold;
    if (
      threshold !== undefined &&
      (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))
    ) {
      invalidArgument('a number in (0, 1]', 'options.autoCompactThreshold', threshold);
    }
    this.#path = options.path;
    this.#verify = verify;
    this.#identity = identity;
    this.#newFileFormat = format;
    this.#backend = options.backend;
    this.#autoCompactThreshold = threshold;
    this.#pageSize = pageSize();
  }

  get path(): string {
    return this.#path;
  }

  info(): FileStorageInfo {
    return {
      path: this.#path,
      format: this.#file === null ? null : this.#format,
      generation: this.#committed?.generation ?? 0,
      fallenBack: this.#fallenBack,
      loadedEntries: this.#loadedEntries,
      droppedEntries: this.#droppedEntries,
      rebuiltBecause: this.#rebuiltBecause,
    };
  }

  open(context: OpenContext): readonly StoredEntry[] {
    if (this.#fallenBack) return [];
    try {
      // The PR #20245 gate: with entries in memory (or a load mapping), only re-open for
      // append; loading again would map the same file twice.
      // The file itself is touched again only by the next reservation or save.
      if (context.hasEntries || this.#loadMapping !== null) return [];
      // Re-read the index: other processes may have committed since this file was opened.
      this.#committed = null;
      return this.#locked((file) => this.#load(file));
    } catch (error) {
      this.#fallBack('open the cache file', error);
      return [];
    }
  }

  reserve(n: number, options: ReserveOptions): PackedRegion | null {
    // Unnamed entries are never persisted: they need no file pages.
    if (this.#fallenBack || !options.persistable) return this.#heap.reserve(n, options);
    try {
      return this.#reserveInFile(n);
    } catch (error) {
      this.#fallBack(`reserve ${n} bytes in the cache file`, error);
      return this.#heap.reserve(n, options);
    }
  }

  release(region: PackedRegion): void {
    const file = this.#regions.get(region);
    if (file === undefined) {
      this.#heap.release(region);
      return;
    }
    this.#regions.delete(region);
    // Its bytes stay in the file as orphans until compaction.
    file.mapping?.close();
  }

  sync(): void {
    try {
      // Incremental: only regions added since the last sync (spec §3).
      const pending = [...this.#regions.values()].filter((region) => !region.synced);
      if (pending.every(flushedByFileSync)) {
        // One fdatasync writes back every dirty page of the file, mapped ones included
        // (Linux has one page cache), instead of one synchronous msync per region.
        for (const file of new Set(pending.map((region) => region.file))) file.datasync();
      } else {
        for (const region of pending) region.mapping?.sync();
      }
      for (const region of pending) region.synced = true;
    } catch (error) {
      this.#fallBack('msync the cache file', error);
    }
  }

  persist(entries: readonly StoredEntry[]): readonly string[] {
    if (this.#fallenBack || this.#file === null || !this.#unsaved) return [];
    try {
      return this.#save(entries);
    } catch (error) {
      this.#fallBack('save the cache index', error);
      throw new WeightsCacheError(
        'ERR_CACHE_SAVE_FAILED',
        `Could not save the packed-weights index of ${this.#path}`,
        { cause: error },
      );
    }
  }

  close(): void {
    for (const region of this.#regions.values()) region.mapping?.close();
    this.#regions.clear();
    this.#loadMapping?.close();
    this.#loadMapping = null;
    this.#heap.close();
    for (const file of this.#retiredFiles) file.close();
    this.#retiredFiles = [];
    const file = this.#file;
    this.#file = null;
    const orphanRatio = file === null ? 0 : this.#orphanBytes(file) / Math.max(file.size(), 1);
    file?.close();
    this.#committed = null;
    this.#unsaved = false;
    const threshold = this.#autoCompactThreshold;
    if (file !== null && threshold !== undefined && !this.#fallenBack && orphanRatio > threshold) {
      try {
        compact(this.#path, { backend: this.#backend });
      } catch (error) {
        emitCacheWarning(
          'MEMLAYER_CACHE_COMPACT_FAILED',
          `Automatic compaction of ${this.#path} failed; the file stays as it is`,
          error,
        );
      }
    }
  }

  stats(): StorageStats {
    const heapBytes = this.#heap.stats().heapBytes;
    const file = this.#file;
    let mappedBytes = this.#loadMapping?.length ?? 0;
    for (const region of this.#regions.values()) mappedBytes += region.mapping?.length ?? 0;
    if (file === null) return { heapBytes, fileBytes: 0, orphanBytes: 0, mappedBytes };
    return { heapBytes, fileBytes: file.size(), orphanBytes: this.#orphanBytes(file), mappedBytes };
  }

  /** Dirty vs clean bytes of this storage's mappings, from /proc/self/smaps (spec §4.7). */
  memoryStats(): CacheMemoryStats {
    const mappings: Mapping[] = [];
    if (this.#loadMapping !== null) mappings.push(this.#loadMapping);
    for (const region of this.#regions.values()) {
      if (region.mapping !== null) mappings.push(region.mapping);
    }
    return mappingsMemoryStats(mappings, this.#heap.stats().heapBytes);
  }

  /** Runs `fn` under the file lock, first moving to a replacement file if there is one. */
  #locked<T>(fn: (file: CacheFile) => T): T {
    for (let attempt = 0; attempt < REPLACED_FILE_RETRIES; attempt++) {
      const file = this.#currentFile();
      const result = file.withLock(() => {
        if (file.isReplaced() || !this.#ready(file)) return null;
        return { value: fn(file) };
      });
      if (result !== null) return result.value;
      if (this.#file === file) this.#retire(file);
    }
    throw new Error(`${this.#path} kept being replaced while this process tried to lock it`);
  }

  #currentFile(): CacheFile {
    if (this.#file === null) {
      this.#file = CacheFile.open(this.#path, this.#backend);
      this.#committed = null;
    }
    return this.#file;
  }

  /**
   * Reads the committed index of a newly opened file (under its lock). False when the file
   * had to be rebuilt: the caller retries on the fresh file.
   */
  #ready(file: CacheFile): boolean {
    if (this.#committed !== null) return true;
    const seen = inspectCacheFile(file, this.#newFileFormat, this.#identity, this.#pageSize);
    if (seen.kind === 'unusable') {
      // Rejected as a whole (v1, identity, damaged header, torn v2 footer): start a fresh
      // file beside it and rename it over, never truncating bytes others may map.
      this.#rebuiltBecause = seen.error.code;
      emitCacheWarning(
        'MEMLAYER_CACHE_REBUILT',
        `Cache file ${this.#path} is not usable (${seen.error.code}); starting a fresh one`,
        seen.error,
      );
      replaceWithFreshFile(this.#path, this.#newFileFormat, this.#pageSize);
      return false;
    }
    this.#format = seen.format;
    this.#committed = seen.index ?? emptyIndex(seen.format);
    return true;
  }

  #retire(file: CacheFile): void {
    this.#retiredFiles.push(file);
    this.#file = null;
    this.#committed = null;
  }

  #load(file: CacheFile): StoredEntry[] {
    const index = this.#committed;
    this.#loadedEntries = 0;
    this.#droppedEntries = 0;
    if (index === null || index.entries.length === 0) return [];
    const dataStart = dataStartOf(index.version);
    const mapping = file.mapped.map(dataStart, index.indexStart - dataStart, { writable: false });
    this.#loadMapping = mapping;
    const data = mapping.bytes();
    const loaded: StoredEntry[] = [];
    for (const entry of index.entries) {
      const start = entry.fileOffset - dataStart;
      // Kernels read packed data as Float32Array: an unaligned entry is repacked instead.
      if (start < 0 || entry.fileOffset % PACKED_ALLOCATION_ALIGNMENT !== 0) {
        this.#droppedEntries++;
        continue;
      }
      const bytes = data.subarray(start, start + entry.dataSize);
      const crc = 'crc32c' in entry ? entry.crc32c : undefined;
      if (this.#verify === 'full' && crc !== undefined && crc32cOf(bytes) !== crc) {
        this.#droppedEntries++;
        emitCacheWarning(
          'MEMLAYER_CACHE_CORRUPT_ENTRY',
          `Packed entry "${entry.name}" of ${this.#path} fails its CRC32C; it will be repacked`,
        );
        continue;
      }
      const region: PackedRegion = {
        bytes,
        reservedBytes: alignUp(Math.max(entry.dataSize, 1), this.#pageSize),
      };
      this.#regions.set(region, {
        file,
        fileOffset: entry.fileOffset,
        mapping: null,
        synced: true,
        committed: true,
        crc32c: crc,
        crcSize: entry.dataSize,
      });
      loaded.push({
        name: entry.name,
        seed: entry.seed,
        fingerprint: 'fingerprint' in entry ? entry.fingerprint : 0,
        dataSize: entry.dataSize,
        region,
      });
    }
    this.#loadedEntries = loaded.length;
    return loaded;
  }

  #reserveInFile(n: number): PackedRegion {
    const length = alignUp(Math.max(n, 1), this.#pageSize);
    const { file, fileOffset } = this.#appendRegion(length);
    const mapping = file.mapped.map(fileOffset, length, { writable: true });
    const region: PackedRegion = {
      bytes: new Uint8Array(mapping.buffer, 0, n),
      reservedBytes: length,
    };
    this.#regions.set(region, {
      file,
      fileOffset,
      mapping,
      synced: false,
      committed: false,
      crc32c: undefined,
      crcSize: 0,
    });
    this.#unsaved = true;
    return region;
  }

  /** Grows the file by a page-aligned region at its end (real blocks, under the lock). */
  #appendRegion(length: number): { file: CacheFile; fileOffset: number } {
    return this.#locked((file) => {
      const end = Math.max(file.size(), dataStartOf(this.#format));
      const fileOffset = alignUp(end, this.#pageSize);
      file.mapped.grow(fileOffset + length);
      return { file, fileOffset };
    });
  }

  #save(entries: readonly StoredEntry[]): readonly string[] {
    this.sync();
    if (this.#fallenBack) throw new Error('msync failed: the data is not durable');
    // Regions in a file that was since replaced (compaction by another process) are
    // copied into the current file first, unless its index already holds the same bytes.
    const placed = this.#placeInCurrentFile(entries);
    const current = this.#currentFile();
    current.datasync();
    const durable = this.#locked((file) => {
      if (file !== current) return null; // replaced meanwhile: try again from the top
      // Merge with what other processes committed since we last looked (spec §4.2).
      const newest = readNewestIndex(file, this.#identity);
      const byName = new Map<string, XpwcEntryV3>();
      for (const entry of newest?.entries ?? []) byName.set(entry.name, withChecks(entry));
      const ours: string[] = [];
      for (const { entry, fresh } of placed) {
        // Our loaded entries lose to a newer commit of the same name; our new packs win.
        if (!fresh && byName.has(entry.name)) continue;
        byName.set(entry.name, entry);
        ours.push(entry.name);
      }
      const index = commitIndex(file, this.#format, [...byName.values()], this.#identity);
      if (index === null) return [];
      this.#committed = index;
      const written = new Set(ours);
      for (const { stored } of placed) {
        if (written.has(stored.name)) {
          const region = this.#regions.get(stored.region);
          if (region !== undefined) region.committed = true;
        }
      }
      return ours;
    });
    if (durable === null) return this.#save(entries);
    this.#unsaved = false;
    return durable;
  }

  #placeInCurrentFile(entries: readonly StoredEntry[]): Placed[] {
    const placed: Placed[] = [];
    const current = this.#currentFile();
    for (const stored of entries) {
      const region = this.#regions.get(stored.region);
      if (region === undefined) continue; // a heap entry: never written
      if (region.crc32c === undefined || region.crcSize !== stored.dataSize) {
        region.crc32c = crc32cOf(stored.region.bytes.subarray(0, stored.dataSize));
        region.crcSize = stored.dataSize;
      }
      const fresh = !region.committed;
      let fileOffset = region.fileOffset;
      if (region.file !== current) {
        const committed = this.#committed?.entries.find((e) => e.name === stored.name);
        if (committed !== undefined && sameData(committed, stored, region.crc32c)) {
          fileOffset = committed.fileOffset;
        } else {
          fileOffset = this.#copyIntoCurrentFile(stored.region.bytes.subarray(0, stored.dataSize));
        }
      }
      placed.push({
        stored,
        fresh,
        entry: {
          name: stored.name,
          fileOffset,
          dataSize: stored.dataSize,
          seed: stored.seed,
          fingerprint: stored.fingerprint,
          crc32c: region.crc32c,
        },
      });
    }
    return placed;
  }

  #copyIntoCurrentFile(bytes: Uint8Array): number {
    const length = alignUp(Math.max(bytes.byteLength, 1), this.#pageSize);
    const { file, fileOffset } = this.#appendRegion(length);
    const mapping = file.mapped.map(fileOffset, length, { writable: true });
    try {
      mapping.bytes().set(bytes);
      mapping.sync();
    } finally {
      mapping.close();
    }
    return fileOffset;
  }

  /** File bytes that neither the committed index nor a pending region of ours references. */
  #orphanBytes(file: CacheFile): number {
    const index = this.#committed;
    const format = index?.version ?? this.#format;
    let live = format === 3 ? dataStartOf(3) : 0;
    const names = new Set<string>();
    if (index !== null) {
      live += index.trailerLength;
      for (const entry of index.entries) {
        names.add(entry.name);
        live += alignUp(Math.max(entry.dataSize, 1), this.#pageSize);
      }
    }
    for (const region of this.#regions.values()) {
      if (region.mapping !== null && region.file === file && !region.committed) {
        live += region.mapping.length;
      }
    }
    return Math.max(0, file.size() - live);
  }

  #fallBack(action: string, error: unknown): void {
    if (this.#fallenBack) return;
    this.#fallenBack = true;
    emitCacheWarning(
      'MEMLAYER_CACHE_HEAP_FALLBACK',
      `Could not ${action} (${this.#path}); packed weights now go to the heap`,
      error,
    );
    // File mode is over: new bytes go to the heap. Mappings already handed out stay
    // valid until close() (the cache may still read them).
  }
}

interface Placed {
  readonly stored: StoredEntry;
  readonly entry: XpwcEntryV3;
  /** Packed by this process and not yet committed. */
  readonly fresh: boolean;
}

function emptyIndex(version: CacheFormat): CommittedIndex {
  return { version, entries: [], indexStart: 0, trailerLength: 0, generation: 0 };
}

/** A committed entry as a v3 entry (v2 entries have no CRC: 0 is written only to v2 files). */
function withChecks(entry: XpwcEntry): XpwcEntryV3 {
  return 'crc32c' in entry ? entry : { ...entry, fingerprint: 0, crc32c: 0 };
}

function sameData(committed: XpwcEntry, stored: StoredEntry, crc: number): boolean {
  return (
    committed.dataSize === stored.dataSize &&
    committed.seed === stored.seed &&
    'crc32c' in committed &&
    committed.crc32c === crc &&
    committed.fingerprint === stored.fingerprint
  );
}

/**
 * True when fdatasync of the file also writes back this region's mapped pages: a kernel
 * mapping on Linux. The heap backend writes a region back only through its own sync().
 */
function flushedByFileSync(region: FileRegion): boolean {
  return (
    process.platform === 'linux' && (region.mapping === null || region.mapping.backend === 'posix')
  );
}
