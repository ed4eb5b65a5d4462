// Sealed file regions on their way to the cache file. Their pwrites go in batches of about
// a mebibyte, each one task on the thread pool (mmap-native writeInBackground) that runs
// while the main thread packs the next layers. One task per region does not pay here:
// queuing a task costs tens of microseconds on the main thread, as much as the write.
import type { BackgroundWrite, MappedFile, WritePart } from '@memlayer/mmap-native';
import type { PackedRegion } from './packed-storage.js';

/** A batch is started once its regions hold this many bytes (a larger region goes alone). */
export const BATCH_BYTES = 1024 * 1024;
/** Batches left running at once; each holds its regions' staging buffers until it is over. */
export const MAX_BATCHES_IN_FLIGHT = 2;
/** Past this many bytes in flight a new batch waits for older ones (one always runs). */
export const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/** Called once per batch, in the order they started, when the storage needs it over. */
export type FinishBatch = (regions: readonly PackedRegion[], write: BackgroundWrite) => void;

interface Batch {
  readonly file: MappedFile;
  readonly regions: PackedRegion[];
  /** What the batch's task writes: each region's bytes at its file position. */
  readonly parts: WritePart[];
  bytes: number;
  write: BackgroundWrite | null;
}

export class WriteBatches {
  #open: Batch | null = null;
  /** Zeros the batches write as padding (nothing writes into it). */
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
   * no other region shares): the regions of a batch are then one stretch of the file,
   * which mmap-native writes whole, in calls of at most an aligned 512 KiB. A page cache
   * with large folios (ext4, xfs) keeps each such stretch as one folio, and a warm start's
   * mapping faults it in at once instead of 16 pages at a time.
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
    if (batch === null) {
      batch = { file, regions: [], parts: [], bytes: 0, write: null };
      this.#open = batch;
    }
    batch.regions.push(region);
    batch.parts.push({ source, position });
    batch.bytes += source.byteLength;
    const padding = reservedBytes - source.byteLength;
    if (padding > 0) {
      batch.parts.push({ source: this.#zeros(padding), position: position + source.byteLength });
      batch.bytes += padding;
    }
    if (batch.bytes >= BATCH_BYTES) this.#start(batch);
  }

  /** `length` zero bytes, from the one buffer of zeros. */
  #zeros(length: number): Uint8Array {
    if (this.#zeroBytes.byteLength < length) this.#zeroBytes = new Uint8Array(length);
    return this.#zeroBytes.subarray(0, length);
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
   * `wait`, also the oldest one still running when none was over. Returns whether any
   * batch was finished: their staging buffers can be reused.
   */
  finishSome(wait: boolean): boolean {
    let finished = false;
    while (this.#running.length > 0 && (this.#running[0] as Batch).write?.done === true) {
      this.#finishOldest();
      finished = true;
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
    this.#finish(oldest.regions, oldest.write as BackgroundWrite);
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
