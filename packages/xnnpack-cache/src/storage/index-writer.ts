import { alignUp, type XpwcEntryV3 } from '@memlayer/cache-format';
import type { BackgroundWrite } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import { dataCrc32c } from './data-crc.js';
import { type FileRegions, indexEntryOf, sameData, withChecks } from './file-region.js';
import {
  type CacheFormat,
  type CommittedIndex,
  type IndexCommit,
  planIndexCommit,
  readNewestIndex,
} from './index-io.js';
import type { StoredEntry } from './packed-storage.js';
import type { RegionAllocator } from './region-allocator.js';

export interface IndexWriterParts {
  readonly identity: string;
  readonly pageSize: number;
  /** The storage's live file regions (shared, read and updated here). */
  readonly regions: FileRegions;
  readonly allocator: RegionAllocator;
}

/** What the storage lends a save: its file handling. */
export interface SaveContext {
  readonly format: CacheFormat;
  committed(): CommittedIndex | null;
  currentFile(): CacheFile;
  /**
   * Runs `fn` under the exclusive lock of the current (possibly replaced) file, waiting at
   * most `timeoutMs` (default: the storage's); `fn` may hand the lock over to a task.
   */
  locked<T>(
    fn: (file: CacheFile, handOver: (task: BackgroundWrite) => void) => T,
    timeoutMs?: number,
  ): T;
  appendRegion(length: number): { file: CacheFile; fileOffset: number };
}

export interface Saved {
  /** Names this commit wrote (ours); the cache marks them loaded. */
  readonly names: readonly string[];
  /** The index now committed, or null when there was nothing to commit. */
  readonly index: CommittedIndex | null;
  /**
   * The thread-pool task that makes the commit durable (a save in the background), or null:
   * the commit is durable already. Until it is over it holds the file lock.
   */
  readonly task: BackgroundWrite | null;
}

/**
 * 'now': every write and sync done before save() returns. 'background': save() returns
 * once the index is encoded under the lock; one thread-pool task then syncs the data,
 * writes the trailer, syncs, writes the slot, syncs and releases the lock, with no
 * JavaScript callback (a process stopped while its thread is busy still commits).
 */
export type SaveMode =
  | { readonly kind: 'now' }
  | { readonly kind: 'background'; readonly lockTimeoutMs: number };

interface Placed {
  readonly stored: StoredEntry;
  readonly entry: XpwcEntryV3;
  /** Packed by this process and not yet committed. */
  readonly fresh: boolean;
}

/**
 * The durable commit, in cache-format's order: data written back (fdatasync), then the
 * trailer appended and synced, then the commit slot (v3). A crash before the slot write
 * leaves the previous commit in force; the new bytes are orphans.
 */
export class IndexWriter {
  readonly #parts: IndexWriterParts;

  constructor(parts: IndexWriterParts) {
    this.#parts = parts;
  }

  /**
   * Writes back every carved region. On Linux one fdatasync per file covers its mapped
   * pages too (one page cache); elsewhere, and on mmap-native's heap backend, each chunk
   * is msync'ed.
   */
  syncData(datasync = true): void {
    const files = new Set<CacheFile>();
    for (const chunk of this.#parts.allocator.chunks()) {
      if (process.platform === 'linux' && chunk.mapping.backend === 'posix') files.add(chunk.file);
      else chunk.mapping.sync();
    }
    if (datasync) for (const file of files) file.datasync();
  }

  save(
    entries: readonly StoredEntry[],
    context: SaveContext,
    mode: SaveMode = { kind: 'now' },
  ): Saved {
    const background = mode.kind === 'background';
    // In the background, the task's first fdatasync writes the current file's data back.
    this.syncData(!background);
    // Regions in a file that was since replaced (compaction by another process) are
    // copied into the current file first, unless its index already holds the same bytes.
    const placed = this.#placeInCurrentFile(entries, context);
    const current = context.currentFile();
    if (!background) current.datasync();
    const timeoutMs = background ? mode.lockTimeoutMs : undefined;
    const saved = context.locked((file, handOver): Saved | null => {
      if (file !== current) return null; // replaced meanwhile: try again from the top
      // Merge with what other processes committed since we last looked.
      const newest = readNewestIndex(file, this.#parts.identity);
      const byName = new Map<string, XpwcEntryV3>();
      for (const entry of newest?.entries ?? []) byName.set(entry.name, withChecks(entry));
      const ours: string[] = [];
      for (const { entry, fresh } of placed) {
        // Our loaded entries lose to a newer commit of the same name; our new packs win.
        if (!fresh && byName.has(entry.name)) continue;
        byName.set(entry.name, entry);
        ours.push(entry.name);
      }
      this.#parts.allocator.trimTail(file);
      const commit = planIndexCommit(
        file,
        context.format,
        [...byName.values()],
        this.#parts.identity,
      );
      if (commit === null) return { names: [], index: null, task: null };
      const task = background ? startCommit(file, commit) : null;
      if (task === null) writeCommit(file, commit);
      else handOver(task);
      const written = new Set(ours);
      for (const { stored } of placed) {
        if (!written.has(stored.name)) continue;
        const region = this.#parts.regions.get(stored.region);
        if (region !== undefined) region.committed = true;
      }
      return { names: ours, index: commit.index, task };
    }, timeoutMs);
    return saved ?? this.save(entries, context, mode);
  }

  #placeInCurrentFile(entries: readonly StoredEntry[], context: SaveContext): Placed[] {
    const placed: Placed[] = [];
    const current = context.currentFile();
    for (const stored of entries) {
      const region = this.#parts.regions.get(stored.region);
      if (region === undefined) continue; // a heap entry: never written
      if (region.crc32c === undefined || region.crcSize !== stored.dataSize) {
        region.crc32c = dataCrc32c(stored.region.bytes.subarray(0, stored.dataSize));
        region.crcSize = stored.dataSize;
      }
      const fresh = !region.committed;
      let fileOffset = region.fileOffset;
      if (region.file !== current) {
        const committed = context.committed()?.entries.find((e) => e.name === stored.name);
        if (committed !== undefined && sameData(committed, stored, region.crc32c)) {
          fileOffset = committed.fileOffset;
        } else {
          fileOffset = this.#copy(stored.region.bytes.subarray(0, stored.dataSize), context);
        }
      }
      placed.push({ stored, fresh, entry: indexEntryOf(stored, fileOffset, region.crc32c) });
    }
    return placed;
  }

  #copy(bytes: Uint8Array, context: SaveContext): number {
    const length = alignUp(Math.max(bytes.byteLength, 1), this.#parts.pageSize);
    const { file, fileOffset } = context.appendRegion(length);
    file.write(bytes, fileOffset);
    return fileOffset;
  }
}

/** Each write followed by an fdatasync: the slot never reaches the disk before its trailer. */
function writeCommit(file: CacheFile, commit: IndexCommit): void {
  for (const { bytes, position } of commit.writes) {
    file.write(bytes, position);
    file.datasync();
  }
}

/** The same on the thread pool, after the data's fdatasync; the task releases the lock. */
function startCommit(file: CacheFile, commit: IndexCommit): BackgroundWrite {
  const parts = commit.writes.map(({ bytes, position }) => ({
    source: bytes,
    position,
    syncBefore: true,
  }));
  return file.mapped.writeInBackground(parts, { syncAfter: true, releaseLock: true });
}
