import { alignUp, crc32cOf, type XpwcEntryV3 } from '@memlayer/cache-format';
import type { CacheFile } from './cache-file.js';
import { type FileRegions, indexEntryOf, sameData, withChecks } from './file-region.js';
import { type CacheFormat, type CommittedIndex, commitIndex, readNewestIndex } from './index-io.js';
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
  /** Runs `fn` under the exclusive lock of the current (possibly replaced) file. */
  locked<T>(fn: (file: CacheFile) => T): T;
  appendRegion(length: number): { file: CacheFile; fileOffset: number };
}

export interface Saved {
  /** Names this commit wrote (ours); the cache marks them loaded. */
  readonly names: readonly string[];
  /** The index now committed, or null when there was nothing to commit. */
  readonly index: CommittedIndex | null;
}

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
  syncData(): void {
    const files = new Set<CacheFile>();
    for (const chunk of this.#parts.allocator.chunks()) {
      if (process.platform === 'linux' && chunk.mapping.backend === 'posix') files.add(chunk.file);
      else chunk.mapping.sync();
    }
    for (const file of files) file.datasync();
  }

  save(entries: readonly StoredEntry[], context: SaveContext): Saved {
    this.syncData();
    // Regions in a file that was since replaced (compaction by another process) are
    // copied into the current file first, unless its index already holds the same bytes.
    const placed = this.#placeInCurrentFile(entries, context);
    const current = context.currentFile();
    current.datasync();
    const saved = context.locked((file): Saved | null => {
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
      const index = commitIndex(file, context.format, [...byName.values()], this.#parts.identity);
      if (index === null) return { names: [], index: null };
      const written = new Set(ours);
      for (const { stored } of placed) {
        if (!written.has(stored.name)) continue;
        const region = this.#parts.regions.get(stored.region);
        if (region !== undefined) region.committed = true;
      }
      return { names: ours, index };
    });
    return saved ?? this.save(entries, context);
  }

  #placeInCurrentFile(entries: readonly StoredEntry[], context: SaveContext): Placed[] {
    const placed: Placed[] = [];
    const current = context.currentFile();
    for (const stored of entries) {
      const region = this.#parts.regions.get(stored.region);
      if (region === undefined) continue; // a heap entry: never written
      if (region.crc32c === undefined || region.crcSize !== stored.dataSize) {
        region.crc32c = crc32cOf(stored.region.bytes.subarray(0, stored.dataSize));
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
