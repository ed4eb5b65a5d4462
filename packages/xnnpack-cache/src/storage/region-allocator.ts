import { alignUp } from '@memlayer/cache-format';
import { type Mapping, NO_GC_WINDOW_BYTES } from '@memlayer/mmap-native';
import type { CacheFile } from './cache-file.js';
import { BATCH_BYTES, MAX_BATCHES_IN_FLIGHT } from './write-batches.js';

/**
 * A stretch of fresh file pages grown in one step and mapped once (MAP_SHARED, writable);
 * regions are carved from it in order.
 */
/** File bytes [start, end). */
export interface FileRange {
  readonly start: number;
  readonly end: number;
}

export interface Chunk {
  readonly file: CacheFile;
  readonly start: number;
  /** File offset past the chunk's last byte (moves down when its unused tail is cut). */
  end: number;
  /** Next free byte. */
  cursor: number;
  readonly mapping: Mapping;
  /** Regions carved from it and not yet released. */
  live: number;
}

/**
 * The unused end of a retired chunk: while the file still ends there, the next chunk may
 * start at `from` instead (the old mapping never touches bytes past its cursor, and two
 * MAP_SHARED mappings of the same pages see the same bytes).
 */
export interface UnusedTail {
  readonly file: CacheFile;
  readonly from: number;
  readonly end: number;
}

export interface Carved {
  readonly chunk: Chunk;
  readonly fileOffset: number;
  readonly bytes: Uint8Array;
}

/**
 * First growth of a batch; each later growth doubles, up to the maximum: mmap-native's
 * window that starts no garbage collection (a cold 1 GiB start ran 7 with 256 MiB chunks).
 */
const FIRST_CHUNK_BYTES = 8 << 20;
const MAX_CHUNK_BYTES = NO_GC_WINDOW_BYTES;

/**
 * Batched file growth: instead of one lock, stat, posix_fallocate and mapping per packed
 * entry, the file grows by a chunk (8 MiB, doubling to 32 MiB; less when the disk budget
 * leaves less room) and entries are carved from its one mapping. Fresh pages read as zero, so regions are handed out `zeroed`.
 * The unused tail of the newest chunk is cut off at commit when no one grew the file after it.
 */
export class RegionAllocator {
  readonly #pageSize: number;
  #current: Chunk | null = null;
  #nextChunkBytes = FIRST_CHUNK_BYTES;
  readonly #chunks = new Set<Chunk>();

  constructor(pageSize: number) {
    this.#pageSize = pageSize;
  }

  /**
   * `length` page-aligned bytes of the current file (`file`, null before the first open);
   * `grow(bytes, minimum, tail)` appends at least `minimum` (preferably `bytes`) fresh bytes
   * at the end of the current file (or from `tail.from` when the file still ends with that
   * unused tail) under its lock and returns that file, offset and size.
   */
  carve(
    file: CacheFile | null,
    length: number,
    grow: (
      bytes: number,
      minimum: number,
      tail: UnusedTail | null,
    ) => { file: CacheFile; fileOffset: number; size: number },
  ): Carved {
    let chunk = this.#current;
    if (chunk === null || chunk.file !== file || chunk.end - chunk.cursor < length) {
      const tail = chunk === null ? null : { file: chunk.file, from: chunk.cursor, end: chunk.end };
      this.#retireCurrent();
      const wanted = alignUp(Math.max(length, this.#nextChunkBytes), this.#pageSize);
      const grown = grow(wanted, length, tail);
      const { fileOffset, size } = grown;
      file = grown.file;
      this.#nextChunkBytes = Math.min(this.#nextChunkBytes * 2, MAX_CHUNK_BYTES);
      const mapping = file.mapped.map(fileOffset, size, { writable: true });
      chunk = {
        file,
        start: fileOffset,
        end: fileOffset + size,
        cursor: fileOffset,
        mapping,
        live: 0,
      };
      this.#current = chunk;
      this.#chunks.add(chunk);
    }
    const fileOffset = chunk.cursor;
    chunk.cursor += length;
    chunk.live++;
    return {
      chunk,
      fileOffset,
      bytes: new Uint8Array(chunk.mapping.buffer, fileOffset - chunk.start, length),
    };
  }

  /**
   * Whether regions of `chunk` are packed in a heap buffer and written with pwrite (see
   * StagingBuffers): only where the chunk is a kernel mapping of the file's pages, which
   * sees a pwrite at once (the heap backend's mapping is a copy taken at map time).
   */
  stages(chunk: Chunk): boolean {
    return chunk.mapping.backend === 'posix';
  }

  /** The mapped view of `length` bytes at `fileOffset`: what the cache hands out once written. */
  mappedView(chunk: Chunk, fileOffset: number, length: number): Uint8Array {
    return new Uint8Array(chunk.mapping.buffer, fileOffset - chunk.start, length);
  }

  /** A carved region is no longer needed; a chunk with none left is unmapped. */
  release(chunk: Chunk): void {
    chunk.live--;
    if (chunk.live <= 0 && chunk !== this.#current) this.#close(chunk);
  }

  /**
   * Every open chunk. Packing may go on between a reservation and a commit (and a commit
   * may run between two packs), so a write-back covers all of them, not a "dirty" subset.
   */
  chunks(): Chunk[] {
    return [...this.#chunks];
  }

  /**
   * Under the file's lock, before a commit appends its trailer: when the file still ends
   * with our current chunk, cut its unused tail so the trailer follows the data directly.
   * Only where the chunk is a kernel mapping (the heap backend would write it back).
   */
  trimTail(file: CacheFile): void {
    const chunk = this.#current;
    if (chunk === null || chunk.file !== file || chunk.mapping.backend !== 'posix') return;
    if (chunk.cursor === chunk.end || file.size() !== chunk.end) return;
    const cut = alignUp(chunk.cursor, this.#pageSize);
    file.truncate(cut);
    chunk.end = cut;
    chunk.cursor = cut;
  }

  /** Mapped bytes of all open chunks. */
  mappedBytes(): number {
    let bytes = 0;
    for (const chunk of this.#chunks) bytes += chunk.mapping.length;
    return bytes;
  }

  mappings(): Mapping[] {
    return [...this.#chunks].map((chunk) => chunk.mapping);
  }

  /** Bytes of `file` set aside in chunks but not carved: orphans once the process ends. */
  uncarvedBytes(file: CacheFile): number {
    let bytes = 0;
    for (const chunk of this.#chunks) if (chunk.file === file) bytes += chunk.end - chunk.cursor;
    return bytes;
  }

  /** The ranges `uncarvedBytes` counts. */
  uncarvedRanges(file: CacheFile): FileRange[] {
    const ranges: FileRange[] = [];
    for (const chunk of this.#chunks) {
      if (chunk.file === file && chunk.end > chunk.cursor) {
        ranges.push({ start: chunk.cursor, end: chunk.end });
      }
    }
    return ranges;
  }

  /** Stops carving from the current chunk (its file was replaced or closed). */
  retire(): void {
    this.#retireCurrent();
  }

  closeAll(): void {
    for (const chunk of this.#chunks) chunk.mapping.close();
    this.#chunks.clear();
    this.#current = null;
  }

  #retireCurrent(): void {
    const chunk = this.#current;
    this.#current = null;
    if (chunk !== null && chunk.live <= 0) this.#close(chunk);
  }

  #close(chunk: Chunk): void {
    chunk.mapping.close();
    this.#chunks.delete(chunk);
  }
}

/**
 * Free staging buffers kept for reuse: all of them while they hold no more than one batch
 * being filled and those in flight (write-batches.ts), else the largest two. A fresh
 * buffer costs a page fault per page on its first use.
 */
const KEPT_STAGING_BUFFERS = 2;
const KEPT_STAGING_BYTES = (MAX_BATCHES_IN_FLIGHT + 1) * BATCH_BYTES;

/**
 * Heap buffers that file regions are packed into before one pwrite puts the bytes in the
 * file. A store into a fresh MAP_SHARED page faults the page in, zero-fills it and marks
 * it dirty, page by page; pwrite copies whole pages into the page cache in one system
 * call. bench/file-write-modes.ts: 1024 regions of 66,048 bytes, fresh processes,
 * medians of 7: stores into the mapping 2.39x a heap baseline, pack + pwrite 1.08x.
 * The pwrites run in batches on the thread pool while the next regions are packed
 * (write-batches.ts). A buffer is reused once its region is written or released: the
 * buffers of a few batches serve a whole model built layer by layer.
 */
export class StagingBuffers {
  readonly #free: ArrayBuffer[] = [];
  #freeBytes = 0;

  /**
   * `length` zero bytes to pack into (a reused buffer is cleared here, so regions stay
   * `zeroed` and the packer does not clear them a second time).
   */
  /** Whether take(length) reuses a free buffer (else it allocates a fresh one). */
  fits(length: number): boolean {
    for (const buffer of this.#free) if (buffer.byteLength >= length) return true;
    return false;
  }

  take(length: number): Uint8Array {
    const free = this.#free;
    for (let i = 0; i < free.length; i++) {
      const buffer = free[i] as ArrayBuffer;
      if (buffer.byteLength >= length) {
        free.splice(i, 1);
        this.#freeBytes -= buffer.byteLength;
        return new Uint8Array(buffer, 0, length).fill(0);
      }
    }
    return new Uint8Array(new ArrayBuffer(length));
  }

  /** A buffer from take() is no longer needed. */
  give(bytes: Uint8Array): void {
    const free = this.#free;
    free.push(bytes.buffer as ArrayBuffer);
    this.#freeBytes += bytes.buffer.byteLength;
    if (free.length > KEPT_STAGING_BUFFERS && this.#freeBytes > KEPT_STAGING_BYTES) {
      // Keep the largest: they serve every smaller region too.
      free.sort((a, b) => b.byteLength - a.byteLength);
      while (free.length > KEPT_STAGING_BUFFERS && this.#freeBytes > KEPT_STAGING_BYTES) {
        this.#freeBytes -= (free.pop() as ArrayBuffer).byteLength;
      }
    }
  }

  clear(): void {
    this.#free.length = 0;
    this.#freeBytes = 0;
  }
}
