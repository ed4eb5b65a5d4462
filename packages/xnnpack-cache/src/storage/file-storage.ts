// The PackedStorage of a cache file in one class (about 600 lines): each public method is
// one step of the storage protocol the cache drives (open, reserve, seal, sync, persist,
// flush, close), and they share one session. The jobs behind the steps live beside it:
// session and policy, entry loader, load windows, region allocator, index writer, deferred
// commit, budget, eviction and fallback.
import { alignUp, describeFileLayout } from '@memlayer/cache-format';
import { type BackgroundWrite, type Mapping, pageSize } from '@memlayer/mmap-native';
import { WeightsCacheError } from '../errors.js';
import { BudgetKeeper } from './budget.js';
import type { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';
import { commitAtExit, type DeferredCommitter, forget } from './deferred-commit.js';
import { loadCommittedEntries, NO_LOADED_ENTRIES, storedEntriesOf } from './entry-loader.js';
import { FallbackLedger, reasonOf } from './fallback.js';
import { FileRegions } from './file-region.js';
import { CacheFileSession } from './file-session.js';
import {
  type FileStorageOptions,
  type ResolvedFileStorageOptions,
  resolveFileStorageOptions,
} from './file-storage-options.js';
import { HeapStorage } from './heap-storage.js';
import { type CacheFormat, dataStartOf } from './index-io.js';
import { IndexWriter, type Saved, type SaveMode } from './index-writer.js';
import { type CacheMemoryStats, mappingsMemoryStats } from './memory-stats.js';
import type {
  FallbackReason,
  LoadedEntries,
  OpenContext,
  PackedRegion,
  PackedStorage,
  ReserveOptions,
  StorageStats,
  StoredEntry,
} from './packed-storage.js';
import { type Chunk, RegionAllocator, StagingBuffers } from './region-allocator.js';
import { emitCacheWarning } from './warnings.js';
import { BATCH_BYTES, WriteBatches } from './write-batches.js';

export type { CommitMode, FileStorageOptions, VerifyMode } from './file-storage-options.js';

/**
 * Longest wait for the file lock when finalize starts the commit: long enough for another
 * process's growth step (well under a millisecond), never for its whole commit. A lock
 * still busy after it leaves the commit to later turns of the event loop.
 */
const FINALIZE_LOCK_WAIT_MS = 5;
/** Pause between later attempts at a commit whose lock was busy. */
const COMMIT_RETRY_MS = 20;

export interface FileStorageInfo {
  readonly path: string;
  /** Format of the open file (null before open or after fallback). */
  readonly format: CacheFormat | null;
  /** Generation of the newest v3 commit this process knows (0: none or v2). */
  readonly generation: number;
  readonly fallenBack: boolean;
  /** Why new entries go to the heap (null while file mode is on). */
  readonly fallbackReason: FallbackReason | null;
  /** Entries presented by the last load, and entries dropped by it (bad CRC or alignment). */
  readonly loadedEntries: number;
  readonly droppedEntries: number;
  /** Why the file was last rebuilt (an XpwcFormatError code), or null. */
  readonly rebuiltBecause: string | null;
  /** Entries persisted but not yet committed to the file (the deferred commit). */
  readonly pendingCommit: boolean;
}

/**
 * Packed bytes in a file mapped MAP_SHARED, with the v3 commit protocol of
 * @memlayer/cache-format (v2 files stay v2). This class decides when things happen; the
 * jobs live beside it: CacheFileSession (the current file, its policy, locks and growth),
 * RegionAllocator (batched growth), loadCommittedEntries (load windows),
 * IndexWriter (the commit), BudgetKeeper (disk budget), FallbackLedger (heap accounting).
 * The file lock is held only to read the index, to grow the file and to commit, so several
 * processes share one file. Any I/O failure turns file mode off for the rest of this
 * storage's life: reservations go to the heap, with a warning, and the runtime keeps working.
 */
export class FileStorage implements PackedStorage, DeferredCommitter {
  readonly #options: ResolvedFileStorageOptions;
  readonly #pageSize: number;
  readonly #heap = new HeapStorage();
  readonly #ledger = new FallbackLedger();
  readonly #allocator: RegionAllocator;
  readonly #writer: IndexWriter;
  readonly #budget: BudgetKeeper;
  readonly #session: CacheFileSession;
  #windows: Mapping[] = [];
  readonly #regions = new FileRegions();
  /** Regions still packed in a staging buffer: seal() writes them to the file. */
  readonly #staged = new Map<PackedRegion, Uint8Array>();
  readonly #staging = new StagingBuffers();
  /** Sealed regions whose bytes are written in batches on the thread pool. */
  readonly #writing = new WriteBatches((regions, write) => this.#finishBatch(regions, write));
  #offReason: FallbackReason | null = null;
  /** A file region was reserved since the last commit. */
  #unsaved = false;
  /** Entries handed to persist() and not yet committed. */
  #pending: readonly StoredEntry[] | null = null;
  /** The commit running on the thread pool; it holds the file lock until it is over. */
  #committing: { readonly task: BackgroundWrite; readonly generationBefore: number } | null = null;
  #backgroundScheduled = false;
  /** sync() was just called: the next persist() is finalize's. */
  #finalizing = false;
  #loadedEntries = 0;
  #droppedEntries = 0;

  constructor(options: FileStorageOptions) {
    this.#options = resolveFileStorageOptions(options);
    this.#pageSize = pageSize();
    this.#allocator = new RegionAllocator(this.#pageSize);
    this.#session = new CacheFileSession(this.#options, this.#pageSize, () =>
      this.#allocator.retire(),
    );
    this.#writer = new IndexWriter({
      identity: this.#options.identity,
      pageSize: this.#pageSize,
      regions: this.#regions,
      allocator: this.#allocator,
    });
    this.#budget = new BudgetKeeper(this.#options, this.#pageSize);
  }

  get path(): string {
    return this.#options.path;
  }

  info(): FileStorageInfo {
    this.#settleCommit(false);
    const committing = this.#committing;
    return {
      path: this.path,
      format: this.#session.file === null ? null : this.#session.format,
      generation: committing?.generationBefore ?? this.#session.committed?.generation ?? 0,
      fallenBack: this.#offReason !== null,
      fallbackReason: this.#offReason,
      loadedEntries: this.#loadedEntries,
      droppedEntries: this.#droppedEntries,
      rebuiltBecause: this.#session.rebuiltBecause,
      pendingCommit: this.#pending !== null || committing !== null,
    };
  }

  open(context: OpenContext): readonly StoredEntry[] {
    return storedEntriesOf(this.openLoaded(context));
  }

  openLoaded(context: OpenContext): LoadedEntries {
    if (this.#offReason !== null) return NO_LOADED_ENTRIES;
    try {
      // The PR #20245 gate: with entries in memory (or load windows), only re-open for
      // append; loading again would map the same file twice.
      if (context.hasEntries || this.#windows.length > 0) return NO_LOADED_ENTRIES;
      this.#settleCommit(true);
      // Re-read the index: other processes may have committed since this file was opened.
      this.#session.committed = null;
      const loaded = this.#session.locked('shared', (file) => this.#load(file));
      if (this.#session.appendRefused) this.#offReason = 'foreign-format';
      return loaded;
    } catch (error) {
      this.#fallBack(reasonOf(error, 'open'), 'open the cache file', error);
      return NO_LOADED_ENTRIES;
    }
  }

  reserve(n: number, options: ReserveOptions): PackedRegion | null {
    // Unnamed entries are never persisted: they need no file pages.
    if (!options.persistable) return this.#onHeap('unnamed', n, options);
    if (this.#offReason !== null) return this.#onHeap(this.#offReason, n, options);
    const length = alignUp(Math.max(n, 1), this.#pageSize);
    try {
      // Without a budget, skip summing the unsaved regions (a walk over all of them).
      const budgeted = this.#options.maxFileBytes !== null;
      if (budgeted && !this.#budget.fits(this.#session.committed, this.#unsavedBytes(), length)) {
        return this.#onHeap('over-budget', n, options);
      }
      return this.#reserveInFile(n, length);
    } catch (error) {
      const reason = reasonOf(error, 'io');
      if (reason === 'over-budget') {
        this.#budget.refused();
        return this.#onHeap(reason, n, options);
      }
      this.#fallBack(reason, `reserve ${n} bytes in the cache file`, error);
      return this.#onHeap(reason, n, options);
    }
  }

  release(region: PackedRegion): void {
    const file = this.#regions.get(region);
    if (file === undefined) {
      this.#heap.release(region);
      return;
    }
    // Its staging buffer is reused once no write reads it any more.
    this.#writing.finishThrough(region);
    if (!this.#regions.has(region)) return; // its write failed: it is heap memory now
    this.#regions.delete(region);
    this.#unstage(region);
    // Its bytes stay in the file as orphans until compaction.
    if (file.chunk !== null) this.#allocator.release(file.chunk);
  }

  /**
   * Checksums a freshly packed region while its bytes are still in the CPU caches; a
   * staged region is then written to the file (pwrite) and its `bytes` become the mapped
   * view of them (the cache reads `region.bytes` at every offsetToAddr).
   */
  seal(region: PackedRegion, dataSize: number): void {
    const file = this.#regions.get(region);
    if (file === undefined || file.committed) return;
    file.crc32c = dataCrc32c(region.bytes.subarray(0, dataSize));
    file.crcSize = dataSize;
    if (!this.#staged.has(region) || file.chunk === null) return;
    // Until its batch is written the cache reads the staged bytes; then the mapped view.
    const { mapped } = file.chunk.file;
    this.#writing.add(region, mapped, region.bytes, file.fileOffset, region.reservedBytes);
  }

  /** A batch of sealed regions is written (or failed): each region's mapped view replaces its staging buffer. */
  #finishBatch(regions: readonly PackedRegion[], write: BackgroundWrite): void {
    let failure: unknown;
    let failed = false;
    try {
      write.wait();
    } catch (error) {
      failure = error;
      failed = true;
    }
    for (const region of regions) {
      const file = this.#regions.get(region);
      if (file === undefined || file.chunk === null) continue;
      if (failed) {
        // Which of the batch's parts reached the file is unknown: none is committed.
        this.#writeFailed(region, file.chunk, failure);
        continue;
      }
      const length = region.bytes.byteLength;
      (region as { bytes: Uint8Array }).bytes = this.#allocator.mappedView(
        file.chunk,
        file.fileOffset,
        length,
      );
      this.#unstage(region);
    }
  }

  /**
   * The bytes stay in their staging buffer (now the region's own heap memory), never
   * committed: the runtime keeps working.
   */
  #writeFailed(region: PackedRegion, chunk: Chunk, error: unknown): void {
    this.#staged.delete(region);
    this.#regions.delete(region);
    this.#allocator.release(chunk);
    const reason = reasonOf(error, 'io');
    this.#fallBack(reason, 'write packed weights to the cache file', error);
    this.#ledger.add(reason, region.reservedBytes);
  }

  /**
   * Finalize calls sync() then persist(). Deferred mode does nothing here (the data is
   * written back by the commit itself) and marks the persist() that follows as the
   * finalize one; a persist() alone is an explicit save and commits at once.
   */
  sync(): void {
    // A finalized runtime reads mapped file pages only, and a write-back covers every byte.
    this.#writing.finishAll();
    if (this.#options.commit === 'deferred') {
      this.#finalizing = true;
      return;
    }
    try {
      this.#writer.syncData();
    } catch (error) {
      this.#fallBack(reasonOf(error, 'io'), 'write back the cache file', error);
    }
  }

  needsEntries(): boolean {
    // Without a budget the use order (BudgetKeeper.note) is never read.
    if (this.#options.maxFileBytes !== null) return true;
    return this.#offReason === null && this.#session.file !== null && this.#unsaved;
  }

  persist(entries: readonly StoredEntry[]): readonly string[] {
    this.#writing.finishAll();
    const finalizing = this.#finalizing;
    this.#finalizing = false;
    this.#budget.note(entries, (region) => this.#regions.get(region)?.committed === false);
    if (this.#offReason !== null || this.#session.file === null || !this.#unsaved) return [];
    // A v2 file has no commit slots: until its footer is rewritten, a reader (ExecuTorch)
    // sees a file that does not end in a footer. Keep that window short: commit now.
    const now = this.#options.commit === 'finalize' || !finalizing || this.#session.format === 2;
    if (now) return this.#commitOrThrow(entries);
    this.#pending = [...entries];
    commitAtExit(this);
    // The commit starts now and completes on the thread pool: no turn of the event loop is
    // needed, so a process stopped by a default signal soon after finalize keeps it.
    const lockWait = Math.min(FINALIZE_LOCK_WAIT_MS, this.#options.lockTimeoutMs);
    if (!this.#commitInBackground(lockWait)) this.#scheduleBackgroundCommit(0);
    // Every file-backed entry will be in the commit: the cache may keep them as loaded.
    return entries.filter((entry) => this.#regions.has(entry.region)).map((entry) => entry.name);
  }

  /**
   * Commits what persist() deferred, now, and waits for a commit running in the background.
   * Throws ERR_CACHE_SAVE_FAILED when either fails.
   */
  flush(): void {
    const failure = this.#settleCommit(true);
    if (failure !== undefined) throw this.#saveFailed(failure);
    const pending = this.#pending;
    if (pending === null) return;
    this.#commitOrThrow(pending);
  }

  /**
   * The close and exit path: waits for a commit running in the background, commits what is
   * still pending, warns instead of throwing (a busy lock drops the commit).
   */
  commitPendingNow(): void {
    this.#settleCommit(true);
    const pending = this.#pending;
    if (pending === null) return;
    try {
      this.#commit(pending);
    } catch (error) {
      this.#commitFailed(error);
    }
  }

  /**
   * Starts the pending commit in the background, waiting at most `lockTimeoutMs` for the
   * lock. False when the lock stayed busy (the commit stays pending).
   */
  #commitInBackground(lockTimeoutMs: number): boolean {
    const pending = this.#pending;
    if (pending === null) return true;
    try {
      this.#commit(pending, { kind: 'background', lockTimeoutMs });
    } catch (error) {
      if (reasonOf(error, 'io') === 'lock-busy') return false;
      this.#commitFailed(error);
    }
    return true;
  }

  /**
   * Takes note of the background commit once its task is over (with `wait`, waits for it).
   * Returns its error when it failed: what reached the file is unknown, and the file's own
   * commit slots say which commit is in force.
   */
  #settleCommit(wait: boolean): unknown {
    const committing = this.#committing;
    if (committing === null || (!wait && !committing.task.done)) return undefined;
    this.#committing = null;
    if (this.#pending === null) forget(this);
    try {
      committing.task.wait();
      return undefined;
    } catch (error) {
      this.#session.committed = null;
      this.#warnCommitFailed(error);
      return error;
    }
  }

  /** The pending commit cannot be made: dropped, with a warning. */
  #commitFailed(error: unknown): void {
    this.#pending = null;
    if (this.#committing === null) forget(this);
    this.#warnCommitFailed(error);
  }

  #warnCommitFailed(error: unknown): void {
    emitCacheWarning(
      'MEMLAYER_CACHE_COMMIT_FAILED',
      `Could not commit new entries of ${this.path}; the next start packs them again`,
      error,
    );
  }

  #saveFailed(cause: unknown): WeightsCacheError {
    return new WeightsCacheError(
      'ERR_CACHE_SAVE_FAILED',
      `Could not save the packed-weights index of ${this.path}`,
      { cause },
    );
  }

  close(): void {
    this.#writing.finishAll();
    this.commitPendingNow();
    const file = this.#session.file;
    // The ratio only decides automatic compaction: not counted without a threshold.
    const counted = file !== null && this.#options.autoCompactThreshold !== undefined;
    const orphanRatio = counted ? this.#orphanBytes(file) / Math.max(file.size(), 1) : 0;
    this.#regions.clear();
    for (const window of this.#windows) window.close();
    this.#windows = [];
    this.#allocator.closeAll();
    this.#staged.clear();
    this.#staging.clear();
    this.#heap.close();
    const fileBytes = this.#session.close();
    this.#unsaved = false;
    if (file !== null && this.#offReason === null) {
      this.#budget.afterClose(fileBytes, orphanRatio);
    }
  }

  stats(): StorageStats {
    const heapBytes = this.#heap.stats().heapBytes;
    const file = this.#session.file;
    let mappedBytes = this.#allocator.mappedBytes();
    for (const window of this.#windows) mappedBytes += window.length;
    const extras = {
      fallback: this.#ledger.snapshot(),
      maxFileBytes: this.#options.maxFileBytes,
      evicted: this.#budget.evicted(),
    };
    if (file === null) return { heapBytes, fileBytes: 0, orphanBytes: 0, mappedBytes, ...extras };
    const orphanBytes = this.#orphanBytes(file);
    return { heapBytes, fileBytes: file.size(), orphanBytes, mappedBytes, ...extras };
  }

  /** Dirty vs clean bytes of this storage's mappings, from /proc/self/smaps. */
  memoryStats(): CacheMemoryStats {
    const mappings = [...this.#windows, ...this.#allocator.mappings()];
    return mappingsMemoryStats(mappings, this.#heap.stats().heapBytes);
  }

  #onHeap(reason: FallbackReason, n: number, options: ReserveOptions): PackedRegion | null {
    const region = this.#heap.reserve(n, options);
    if (region !== null) this.#ledger.add(reason, region.reservedBytes);
    return region;
  }

  #load(file: CacheFile): LoadedEntries {
    const index = this.#session.committed;
    this.#loadedEntries = 0;
    this.#droppedEntries = 0;
    if (index === null || index.columns.length === 0) return NO_LOADED_ENTRIES;
    const { verify, loadWindowBytes } = this.#options;
    const settings = { verify, loadWindowBytes, pageSize: this.#pageSize };
    const loaded = loadCommittedEntries(file, index, settings, this.#regions);
    this.#windows = loaded.windows;
    this.#droppedEntries = loaded.dropped;
    this.#loadedEntries = loaded.length;
    return loaded;
  }

  #reserveInFile(n: number, length: number): PackedRegion {
    const carved = this.#allocator.carve(this.#session.file, length, (bytes, minimum, tail) =>
      this.#session.grow(bytes, minimum, tail, this.#growthEnd()),
    );
    // Fresh file pages are zero, and so is a staging buffer handed out.
    const staged = this.#allocator.stages(carved.chunk) ? this.#stagingBuffer(n) : null;
    const region: PackedRegion = {
      bytes: staged ?? carved.bytes.subarray(0, n),
      reservedBytes: length,
      zeroed: true,
    };
    if (staged !== null) this.#staged.set(region, staged);
    this.#regions.set(region, {
      file: carved.chunk.file,
      fileOffset: carved.fileOffset,
      chunk: carved.chunk,
      committed: false,
      crc32c: undefined,
      crcSize: 0,
    });
    this.#unsaved = true;
    return region;
  }

  /**
   * A staging buffer of `n` bytes. A fresh one faults in page by page as it is packed, so
   * the buffers of finished writes are reused first; a region of a batch of its own waits
   * for the oldest write rather than allocate (a 256 MiB layer would fault in 256 MiB).
   */
  #stagingBuffer(n: number): Uint8Array {
    const staging = this.#staging;
    if (!staging.fits(n) && this.#writing.finishSome(false) && staging.fits(n)) {
      return staging.take(n);
    }
    while (!staging.fits(n) && n >= BATCH_BYTES && this.#writing.finishSome(true)) {
      // each pass finished a batch and gave its buffers back
    }
    return staging.take(n);
  }

  /** Gives a region's staging buffer back for reuse. */
  #unstage(region: PackedRegion): void {
    const staged = this.#staged.get(region);
    if (staged === undefined) return;
    this.#staged.delete(region);
    this.#staging.give(staged);
  }

  /**
   * The lock was busy at finalize: tries again on later turns of the event loop, for about
   * `lockTimeoutMs`; after that flush(), close() or the exit hook commits.
   */
  #scheduleBackgroundCommit(attempt: number): void {
    if (this.#backgroundScheduled) return;
    this.#backgroundScheduled = true;
    const timer = setTimeout(() => {
      this.#backgroundScheduled = false;
      if (this.#pending === null || this.#session.file === null) return;
      if (this.#commitInBackground(0)) return;
      const next = attempt + 1;
      if (next * COMMIT_RETRY_MS < this.#options.lockTimeoutMs) {
        this.#scheduleBackgroundCommit(next);
      }
    }, COMMIT_RETRY_MS);
    timer.unref();
  }

  #commitOrThrow(entries: readonly StoredEntry[]): readonly string[] {
    try {
      return this.#commit(entries).names;
    } catch (error) {
      const reason = reasonOf(error, 'io');
      if (reason !== 'lock-busy') this.#fallBack(reason, 'save the cache index', error);
      throw this.#saveFailed(error);
    }
  }

  #commit(entries: readonly StoredEntry[], mode: SaveMode = { kind: 'now' }): Saved {
    this.#settleCommit(true);
    // An entry inserted without seal() (a caller other than the cache) is still staged:
    // its bytes must reach the file before the commit references them.
    if (this.#staged.size > 0) {
      for (const entry of entries) {
        if (this.#staged.has(entry.region)) this.seal(entry.region, entry.dataSize);
      }
    }
    this.#writing.finishAll();
    const session = this.#session;
    const generationBefore = session.committed?.generation ?? 0;
    const saved = this.#writer.save(
      entries,
      {
        format: session.format,
        committed: () => session.committed,
        currentFile: () => session.current(),
        locked: (fn, timeoutMs) => session.locked('exclusive', fn, timeoutMs),
        appendRegion: (length) => session.grow(length, length, null, this.#growthEnd()),
      },
      mode,
    );
    session.committed = saved.index ?? session.committed;
    this.#unsaved = false;
    this.#pending = null;
    // Until its task is over, the exit hook waits for it (exit ends the thread pool too).
    if (saved.task !== null) this.#committing = { task: saved.task, generationBefore };
    else forget(this);
    return saved;
  }

  /** How large growth may make the file (the disk budget less room for the trailer). */
  #growthEnd(): number {
    return this.#budget.growthEnd(this.#session.committed, this.#regions.carvedCount);
  }

  /** Page-rounded bytes reserved in the file and not yet committed. */
  #unsavedBytes(): number {
    return this.#regions.unsavedBytes();
  }

  /**
   * File bytes that neither the committed index nor a pending region of ours references:
   * cache-format's describeFileLayout decides, as it does for compaction and the CLI.
   */
  #orphanBytes(file: CacheFile): number {
    const size = file.size();
    const index = this.#session.committed;
    const pending = [
      ...this.#regions.unsavedRanges(file),
      ...this.#allocator.uncarvedRanges(file),
    ].filter((range) => range.end <= size);
    const trailer = index?.trailer;
    if (trailer === undefined || trailer.trailerEnd > size) {
      // No commit yet: everything past the header that is not pending is orphaned.
      const format = index?.version ?? this.#session.format;
      let used = dataStartOf(format);
      for (const range of pending) used += range.end - range.start;
      return Math.max(0, size - used);
    }
    const input = { fileSize: size, trailer, pageSize: this.#pageSize, pending };
    return describeFileLayout(input, { regions: false }).orphanBytes;
  }

  #fallBack(reason: FallbackReason, action: string, error: unknown): void {
    if (this.#offReason !== null) return;
    this.#offReason = reason;
    emitCacheWarning(
      'MEMLAYER_CACHE_HEAP_FALLBACK',
      `Could not ${action} (${this.path}) [${reason}]; packed weights now go to the heap`,
      error,
    );
    // File mode is over: new bytes go to the heap. Mappings already handed out stay
    // valid until close() (the cache may still read them).
  }
}
