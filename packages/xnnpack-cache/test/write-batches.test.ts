// Batches of sealed regions: when they start, how many run, and what a failure hands back.
import type { BackgroundWrite, MappedFile, WritePart } from '@memlayer/mmap-native';
import { describe, expect, it } from 'vitest';
import type { PackedRegion } from '../src/storage/packed-storage.js';
import {
  BATCH_BYTES,
  MAX_BATCHES_IN_FLIGHT,
  MAX_BYTES_IN_FLIGHT,
  WriteBatches,
} from '../src/storage/write-batches.js';

function region(length: number): PackedRegion {
  return { bytes: new Uint8Array(length), reservedBytes: length, zeroed: true };
}

/** A file whose writes are recorded and succeed (or throw `error` when queued). */
function fakeFile(error?: Error) {
  const tasks: WritePart[][] = [];
  const file = {
    writeInBackground(parts: readonly WritePart[]): BackgroundWrite {
      if (error !== undefined) throw error;
      tasks.push([...parts]);
      return { done: true, wait() {} };
    },
  } as unknown as MappedFile;
  return { file, tasks };
}

function track() {
  const finished: { regions: readonly PackedRegion[]; error: unknown }[] = [];
  const batches = new WriteBatches((regions, write) => {
    let error: unknown = null;
    try {
      write.wait();
    } catch (e) {
      error = e;
    }
    finished.push({ regions, error });
  });
  return { finished, batches };
}

describe('WriteBatches', () => {
  it('starts a batch once it holds BATCH_BYTES, and keeps at most a few running', () => {
    const { file, tasks } = fakeFile();
    const { finished, batches } = track();
    const quarter = BATCH_BYTES / 4;
    const regions = Array.from({ length: 4 * (MAX_BATCHES_IN_FLIGHT + 1) + 1 }, () =>
      region(quarter),
    );
    regions.forEach((r, i) => {
      batches.add(r, file, r.bytes, i * quarter);
    });
    expect(tasks).toHaveLength(MAX_BATCHES_IN_FLIGHT + 1);
    expect(tasks[0]?.map((part) => part.position)).toEqual([0, 1, 2, 3].map((i) => i * quarter));
    // Starting the third batch finished the first; the last region waits in an open batch.
    expect(finished).toEqual([{ regions: regions.slice(0, 4), error: null }]);
    expect(batches.size).toBe(regions.length - 4);
    batches.finishAll();
    expect(tasks).toHaveLength(MAX_BATCHES_IN_FLIGHT + 2);
    expect(finished.map((batch) => batch.regions.length)).toEqual([4, 4, 4, 1]);
    expect(batches.size).toBe(0);
  });

  it("writes the rest of a region's pages as zeros, so that a batch's regions form one stretch", () => {
    const { file, tasks } = fakeFile();
    const { batches } = track();
    const [a, b] = [region(4), region(4)];
    // a's data ends 100 bytes short of its page; b's fills its two pages but for 50 bytes.
    batches.add(a, file, new Uint8Array(3996).fill(1), 0, 4096);
    batches.add(b, file, new Uint8Array(8142).fill(2), 4096, 8192);
    batches.finishAll();
    const written = tasks.map((task) =>
      task.map((part) => [part.position, part.source.byteLength, part.source.at(-1)]),
    );
    expect(written).toEqual([
      [
        [0, 3996, 1],
        [3996, 100, 0],
        [4096, 8142, 2],
        [12238, 50, 0],
      ],
    ]);
    // The padding counts towards the batch: a region of BATCH_BYTES with it starts one.
    const c = region(4);
    batches.add(c, file, new Uint8Array(BATCH_BYTES - 10), 16384, BATCH_BYTES);
    expect(tasks).toHaveLength(2);
  });

  it('lets one large batch run, but not two past the byte limit', () => {
    const { file } = fakeFile();
    const { finished, batches } = track();
    const large = region(8);
    batches.add(large, file, new Uint8Array(MAX_BYTES_IN_FLIGHT + 1), 0);
    expect(finished).toEqual([]);
    const next = region(8);
    batches.add(next, file, new Uint8Array(BATCH_BYTES), MAX_BYTES_IN_FLIGHT + 4096);
    expect(finished.map((batch) => batch.regions)).toEqual([[large]]);
  });

  it('starts the open batch when a region of another file comes', () => {
    const first = fakeFile();
    const second = fakeFile();
    const { batches } = track();
    batches.add(region(4), first.file, new Uint8Array(4), 0);
    batches.add(region(4), second.file, new Uint8Array(4), 0);
    expect(first.tasks).toHaveLength(1);
    expect(second.tasks).toHaveLength(0);
  });

  it('finishes through a region, in order, and ignores one it does not hold', () => {
    const { file } = fakeFile();
    const { finished, batches } = track();
    const [a, b, c] = [region(4), region(4), region(4)];
    batches.add(a, file, new Uint8Array(BATCH_BYTES), 0);
    batches.add(b, file, new Uint8Array(BATCH_BYTES), BATCH_BYTES);
    batches.add(c, file, new Uint8Array(4), 2 * BATCH_BYTES);
    batches.finishThrough(region(4));
    expect(finished).toEqual([]);
    batches.finishThrough(b);
    expect(finished.map((batch) => batch.regions)).toEqual([[a], [b]]);
    batches.finishThrough(c); // in the open batch: started, then finished
    expect(finished.map((batch) => batch.regions)).toEqual([[a], [b], [c]]);
  });

  it('finishes the writes that are over without waiting; waits for the oldest only when asked', () => {
    const writes: { done: boolean }[] = [];
    const file = {
      writeInBackground(): BackgroundWrite {
        const write = { done: false, wait() {} };
        writes.push(write);
        return write;
      },
    } as unknown as MappedFile;
    const { finished, batches } = track();
    const [a, b] = [region(4), region(4)];
    batches.add(a, file, new Uint8Array(BATCH_BYTES), 0);
    batches.add(b, file, new Uint8Array(BATCH_BYTES), BATCH_BYTES);
    expect(batches.finishSome(false)).toBe(false); // neither is over
    (writes[1] as { done: boolean }).done = true;
    expect(batches.finishSome(false)).toBe(false); // the oldest comes first
    expect(finished).toEqual([]);
    expect(batches.finishSome(true)).toBe(true); // waits for a; b, over, is left for next time
    expect(finished.map((batch) => batch.regions)).toEqual([[a]]);
    expect(batches.finishSome(false)).toBe(true);
    expect(finished.map((batch) => batch.regions)).toEqual([[a], [b]]);
    expect(batches.finishSome(true)).toBe(false); // nothing left
  });

  it('hands a batch that could not be queued to its owner as failed', () => {
    const refused = new Error('closed');
    const { file } = fakeFile(refused);
    const { finished, batches } = track();
    const r = region(4);
    batches.add(r, file, new Uint8Array(4), 0);
    batches.finishAll();
    expect(finished).toEqual([{ regions: [r], error: refused }]);
  });
});
