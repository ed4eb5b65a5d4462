// Sealed file regions on their way to the cache file. Their pwrites go in batches, each one
// task on the thread pool (mmap-native writeInBackground) that runs while the main thread
// packs the next layers. One task per region does not pay here: queuing a task costs tens
// of microseconds on the main thread, as much as the write.
//
// Batches end on the file's 2 MiB boundaries, a region that crosses one split there: each
// aligned 2 MiB of the file is then written by one pwritev (mmap-native joins parts that
// follow one another), so a page cache with large folios (ext4, xfs) may hold it as one
// huge folio, which a mapping maps with one page-table entry instead of 512. The first run
// of a warm start then takes a few page faults where it took one per 16 pages.
import type { BackgroundWrite, MappedFile, WritePart } from '@memlayer/mmap-native';
import type { PackedRegion } from './packed-storage.js';

/** Batches are cut where file positions are multiples of this (2 MiB, x86-64's huge page). */
export const BATCH_BYTES = 2 * 1024 * 1024;
/** Batches left running at once; each holds its regions' staging buffers until it is over. */
export const MAX_BATCHES_IN_FLIGHT = 2;
/** Past this many bytes in flight a new batch waits for older ones (one always runs). */
export const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/**
 * Called once per batch, in the order they started, when the storage needs it over:
 * `regions` are written when it succeeded; `heads` only begin in it (the rest of each is
 * in the next batch, which finishes it), and count as failed when it failed.
 */
export type FinishBatch = (
  regions: readonly PackedRegion[],
  write: BackgroundWrite,
  heads: readonly PackedRegion[],
) => void;

interface Batch {
  readonly file: MappedFile;
  readonly regions: PackedRegion[];
  /** Regions whose first bytes the batch writes, finished by the next batch. */
  readonly heads: PackedRegion[];
  /** What the batch's task writes: each region's bytes at its file position. */
  readonly parts: WritePart[];
  bytes: number;
  write: BackgroundWrite | null;
}

export class WriteBatches {
  #open: Batch | null = null;
  #zeroBytes = new Uint8Array(0);
  readonly #running: Batch[] = [];
  #runningBytes = 0;
  readonly #finish: FinishBatch;

  constructor(finish: FinishBatch) {
    this.#finish = finish;
  }

  /** Regions added and not yet finished. */
  get size(): number {
    let count = this.#open?.regions.length ?? 0;
    for (const batch of this.#running) count += batch.regions.length;
    return count;
  }

  /**
   * Queues `source` (the region's packed bytes, unchanged from now on) for `position` of
   * `file`, followed by zeros up to `reservedBytes` (the rest of the region's pages, which
   * no other region shares): a run of regions is then one stretch of the file, written
   * whole.
   */
  add(
    region: PackedRegion,
    file: MappedFile,
    source: Uint8Array,
    position: number,
    reservedBytes = source.byteLength,
  ): void {
    let batch = this.#open;
    if (batch !== null && batch.file !== file) {
      this.#start(batch);
      batch = null;
    }
    batch ??= this.#openBatch(file);
    const pieces = [source];
    if (reservedBytes > source.byteLength)
      pieces.push(this.#zeros(reservedBytes - source.byteLength));
    const end = position + Math.max(reservedBytes, source.byteLength);
    // The last boundary the region reaches: the batch is cut there.
    const boundary = end - (end % BATCH_BYTES);
    if (boundary <= position || boundary === end) {
      batch.regions.push(region);
      addPieces(batch, pieces, position, end);
      if (boundary === end && end > position) this.#start(batch);
      return;
    }
    batch.heads.push(region);
    addPieces(batch, pieces, position, boundary);
    this.#start(batch);
    const next = this.#openBatch(file);
    next.regions.push(region);
    addPieces(next, pieces, position, end, boundary);
  }

  /** `length` zero bytes, from one buffer the batches share (nothing writes into it). */
  #zeros(length: number): Uint8Array {
    if (this.#zeroBytes.byteLength < length) this.#zeroBytes = new Uint8Array(length);
    return this.#zeroBytes.subarray(0, length);
  }

  #openBatch(file: MappedFile): Batch {
    const batch: Batch = { file, regions: [], heads: [], parts: [], bytes: 0, write: null };
    this.#open = batch;
    return batch;
  }

  /** Finishes every batch up to the one holding `region` (nothing when none holds it). */
  finishThrough(region: PackedRegion): void {
    if (this.#open?.regions.includes(region)) {
      this.finishAll();
      return;
    }
    const index = this.#running.findIndex((batch) => batch.regions.includes(region));
    for (let i = 0; i <= index; i++) this.#finishOldest();
  }

  /**
   * Finishes the running batches whose writes are over, oldest first (never waits); with
   * `wait`, also the oldest one still running when none was over, or the batch being
   * filled when none runs. Returns whether any batch was finished: their staging buffers
   * can be reused.
   */
  finishSome(wait: boolean): boolean {
    let finished = false;
    while (this.#running.length > 0 && (this.#running[0] as Batch).write?.done === true) {
      this.#finishOldest();
      finished = true;
    }
    if (!finished && wait && this.#running.length === 0 && this.#open !== null) {
      this.#start(this.#open);
    }
    if (!finished && wait && this.#running.length > 0) {
      this.#finishOldest();
      finished = true;
    }
    return finished;
  }

  /** Starts the batch being filled and finishes every batch. */
  finishAll(): void {
    if (this.#open !== null) this.#start(this.#open);
    while (this.#running.length > 0) this.#finishOldest();
  }

  #start(batch: Batch): void {
    this.#open = null;
    try {
      // The commit's fdatasync then waits for little more than the last batch.
      batch.write = batch.file.writeInBackground(batch.parts, { startWriteback: true });
    } catch (error) {
      batch.write = failed(error);
    }
    this.#running.push(batch);
    this.#runningBytes += batch.bytes;
    while (
      this.#running.length > MAX_BATCHES_IN_FLIGHT ||
      (this.#running.length > 1 && this.#runningBytes > MAX_BYTES_IN_FLIGHT)
    ) {
      this.#finishOldest();
    }
  }

  #finishOldest(): void {
    const oldest = this.#running.shift() as Batch;
    this.#runningBytes -= oldest.bytes;
    this.#finish(oldest.regions, oldest.write as BackgroundWrite, oldest.heads);
  }
}

/**
 * Adds the file bytes [from, to) of `pieces`, which lie one after another from
 * `position`, to `batch` as parts (views, no copy).
 */
function addPieces(
  batch: Batch,
  pieces: readonly Uint8Array[],
  position: number,
  to: number,
  from = position,
): void {
  let at = position;
  for (const piece of pieces) {
    const start = Math.max(from - at, 0);
    const stop = Math.min(to - at, piece.byteLength);
    if (stop > start) {
      batch.parts.push({ source: piece.subarray(start, stop), position: at + start });
      batch.bytes += stop - start;
    }
    at += piece.byteLength;
  }
}

/** A batch that could not even be queued fails like one whose writes failed. */
function failed(error: unknown): BackgroundWrite {
  return {
    done: true,
    wait(): never {
      throw error;
    },
  };
}
