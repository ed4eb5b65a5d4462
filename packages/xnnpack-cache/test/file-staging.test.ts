import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { MappedFile } from '@memlayer/mmap-native';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FileStorage, XNNWeightsCache } from '../src/index.js';
import { BATCH_BYTES, MAX_BATCHES_IN_FLIGHT } from '../src/storage/write-batches.js';
import { captureWarnings, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 5), inputChannels: 40, outputChannels: 24 };
const reference = referenceHashes(SPEC);

describe('file regions packed in a staging buffer, then written in batches', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('hands out zeroed heap bytes, then the mapped file bytes once sealed', () => {
    const path = join(dir, 'staged.xpwc');
    const storage = new FileStorage({ path, backend: 'posix' });
    storage.open({ hasEntries: false });
    const a = storage.reserve(1000, { persistable: true });
    if (a === null) throw new Error('no region');
    const staging = a.bytes;
    expect(a.zeroed).toBe(true);
    expect(staging.every((b) => b === 0)).toBe(true);
    a.bytes.fill(7);
    storage.seal(a, 1000);
    // Its write waits for a batch to fill up; until it is written the staged bytes serve.
    expect(a.bytes.buffer).toBe(staging.buffer);
    storage.sync(); // every batch written
    expect(a.bytes.buffer).not.toBe(staging.buffer);
    expect(a.bytes.byteLength).toBe(1000);
    expect(a.bytes.every((b) => b === 7)).toBe(true);
    // The staging buffer is reused, cleared, for the next region.
    const b = storage.reserve(500, { persistable: true });
    if (b === null) throw new Error('no region');
    expect(b.bytes.buffer).toBe(staging.buffer);
    expect(b.zeroed).toBe(true);
    expect(b.bytes.every((x) => x === 0)).toBe(true);
    // Released unsealed: never written, its buffer free again.
    storage.release(b);
    const c = storage.reserve(100, { persistable: true });
    expect(c?.bytes.buffer).toBe(staging.buffer);
    storage.close();
  });

  it('writes sealed regions in batches on the thread pool, a few batches in flight', () => {
    const path = join(dir, 'batches.xpwc');
    const storage = new FileStorage({ path, backend: 'posix' });
    storage.open({ hasEntries: false });
    // Four regions fill a batch, which then starts; starting a third batch finishes the first.
    const size = Math.ceil(BATCH_BYTES / 4);
    const sealed = range(0, 4 * (MAX_BATCHES_IN_FLIGHT + 1)).map((i) => {
      const region = storage.reserve(size, { persistable: true });
      if (region === null) throw new Error('no region');
      region.bytes.fill(i + 1);
      const staged = region.bytes.buffer;
      storage.seal(region, size);
      return { region, staged };
    });
    sealed.forEach(({ region, staged }, i) => {
      // The first batch is finished (a reservation may also finish later ones whose writes
      // are over): its regions hand out file pages; the last batch was just started.
      if (i < 4) expect(region.bytes.buffer).not.toBe(staged);
      if (i >= 8) expect(region.bytes.buffer).toBe(staged);
      expect(region.bytes.every((b) => b === i + 1)).toBe(true);
    });
    // A release waits for the region's batch (and those before it): its buffer is free again.
    const released = sealed[5] as (typeof sealed)[number];
    storage.release(released.region);
    sealed.slice(4, 8).forEach(({ region, staged }) => {
      if (region !== released.region) expect(region.bytes.buffer).not.toBe(staged);
    });
    const next = storage.reserve(size, { persistable: true });
    expect(next?.bytes.every((b) => b === 0)).toBe(true);
    storage.close();
    // Every sealed region's bytes are in the file (the released one's as orphan bytes).
    const file = readFileSync(path);
    sealed.forEach((_, i) => {
      expect(file.indexOf(Buffer.alloc(size, i + 1))).toBeGreaterThan(0);
    });
  });

  it('a large region reuses the buffer of the write before it instead of a fresh one', () => {
    const path = join(dir, 'large.xpwc');
    const storage = new FileStorage({ path, backend: 'posix' });
    storage.open({ hasEntries: false });
    const size = 2 * BATCH_BYTES; // a batch of its own
    const first = storage.reserve(size, { persistable: true });
    if (first === null) throw new Error('no region');
    const staged = first.bytes.buffer;
    first.bytes.fill(3);
    storage.seal(first, size); // its write starts at once
    const second = storage.reserve(size, { persistable: true });
    // The first write is over (waited for if need be): its buffer serves again, cleared.
    expect(second?.bytes.buffer).toBe(staged);
    expect(second?.bytes.every((b) => b === 0)).toBe(true);
    expect(first.bytes.buffer).not.toBe(staged);
    expect(first.bytes.every((b) => b === 3)).toBe(true);
    storage.close();
  });

  it('keeps a batch whose write failed on the heap: nothing of it is committed', async () => {
    const path = join(dir, 'failed.xpwc');
    const warnings = captureWarnings();
    const failing = vi
      .spyOn(MappedFile.prototype, 'writeInBackground')
      .mockImplementationOnce(() => ({
        done: true,
        wait() {
          throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        },
      }));
    const cache = new XNNWeightsCache({ path, backend: 'posix', commit: 'finalize' });
    const built = buildModel(cache, SPEC);
    failing.mockRestore();
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(outputHashes(built.ops, SPEC.inputChannels)).toEqual(reference);
    // The failed batch's regions count as heap fallback of their reason.
    const fallback = cache.stats().fallback?.['enospc'];
    expect(fallback?.count).toBeGreaterThan(0);
    expect(fallback?.bytes).toBeGreaterThan(0);
    cache.close();
    // The file holds no committed entry: the next start packs everything again.
    const warm = new XNNWeightsCache({ path, backend: 'posix' });
    const again = buildModel(warm, SPEC);
    expect(again.ops.some((op) => op.cacheHit)).toBe(false);
    expect(outputHashes(again.ops, SPEC.inputChannels)).toEqual(reference);
    warm.close();
  });

  it('commits an entry inserted without seal(): its bytes reach the file first', () => {
    const path = join(dir, 'unsealed.xpwc');
    const storage = new FileStorage({ path, backend: 'posix', commit: 'finalize' });
    storage.open({ hasEntries: false });
    const region = storage.reserve(4096, { persistable: true });
    if (region === null) throw new Error('no region');
    region.bytes.fill(0x5a);
    storage.persist([{ name: 'w', seed: 1, fingerprint: 1, dataSize: 4096, region }]);
    storage.close();
    const bytes = new Uint8Array(readFileSync(path));
    const [entry] = readTrailer(bytes, bytes.byteLength).trailer.entries;
    if (entry === undefined) throw new Error('no entry');
    const data = bytes.subarray(Number(entry.fileOffset), Number(entry.fileOffset) + 4096);
    expect(data.every((x) => x === 0x5a)).toBe(true);
  });

  it('runs on the written bytes, and a fresh cache loads the same outputs', () => {
    const path = join(dir, 'model.xpwc');
    const cold = new XNNWeightsCache({ path, backend: 'posix' });
    const built = buildModel(cold, SPEC);
    expect(outputHashes(built.ops, SPEC.inputChannels)).toEqual(reference);
    expect(cold.stats().heapBytes).toBe(0);
    cold.close();
    const warm = new XNNWeightsCache({ path, backend: 'posix', verify: 'full' });
    const loaded = buildModel(warm, SPEC);
    expect(loaded.ops.every((op) => op.cacheHit)).toBe(true);
    expect(outputHashes(loaded.ops, SPEC.inputChannels)).toEqual(reference);
    warm.close();
  });
});
