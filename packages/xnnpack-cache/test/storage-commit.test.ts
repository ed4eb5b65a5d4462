import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FileStorage,
  type FileStorageOptions,
  HeapStorage,
  packingStats,
  resetPackingStats,
  XNNWeightsCache,
} from '../src/index.js';
import { reportOf, startCacheChild } from './child.js';
import { captureWarnings, compactSizeOf, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 6), inputChannels: 64, outputChannels: 48 };
const reference = referenceHashes(SPEC);

function open(path: string, options: Omit<FileStorageOptions, 'path'> = {}) {
  const storage = new FileStorage({ ...options, path });
  return { storage, cache: new XNNWeightsCache({ storage }) };
}

function committedEntries(path: string): number {
  const bytes = new Uint8Array(readFileSync(path));
  return readTrailer(bytes, bytes.byteLength).trailer.entries.length;
}

describe('the deferred commit', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('commits in the background once finalize has returned', async () => {
    const path = join(dir, 'background.xpwc');
    const { storage, cache } = open(path);
    buildModel(cache, SPEC);
    expect(storage.info().pendingCommit).toBe(true);
    // It waits for fdatasync on the thread pool, which takes what the disk takes: poll until
    // it is done (vitest's limit catches a commit that never comes).
    while (storage.info().pendingCommit) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(storage.info()).toMatchObject({ pendingCommit: false, generation: 1 });
    expect(committedEntries(path)).toBe(6);
    cache.close();
  });

  it('commits at process exit when nothing else did', async () => {
    const path = join(dir, 'at-exit.xpwc');
    const cold = reportOf(
      await startCacheChild({ path, ...SPEC, builds: [SPEC.layers], flushBuilds: [] }).done,
    );
    expect(cold.generation).toBe(0); // not yet committed when the child reported
    expect(committedEntries(path)).toBe(6);
    resetPackingStats();
    const { cache } = open(path);
    expect(outputHashes(buildModel(cache, SPEC).ops, SPEC.inputChannels)).toEqual(reference);
    expect(packingStats().calls).toBe(0);
    cache.close();
  });

  it('commits a v2 file at finalize: its footer is the only pointer ExecuTorch reads', () => {
    const path = join(dir, 'v2.bin');
    const { storage, cache } = open(path, { format: 2 });
    buildModel(cache, SPEC);
    expect(storage.info()).toMatchObject({ pendingCommit: false, format: 2 });
    expect(committedEntries(path)).toBe(6);
    cache.close();
  });

  it("commits at finalize with commit: 'finalize'", () => {
    const path = join(dir, 'at-finalize.xpwc');
    const { storage, cache } = open(path, { commit: 'finalize' });
    buildModel(cache, SPEC);
    expect(storage.info()).toMatchObject({ pendingCommit: false, generation: 1 });
    cache.close();
  });
});

describe('batched growth', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('leaves no gaps: the unused end of a chunk is reused, the last one cut at commit', () => {
    const path = join(dir, 'batched.xpwc');
    const storage = new FileStorage({ path, backend: 'posix' });
    storage.open({ hasEntries: false });
    // 6 MiB entries against chunks of 8, 16, 32 MiB: none fits a chunk's leftover exactly.
    const entries = range(0, 7).map((i) => {
      const region = storage.reserve(6 << 20, { persistable: true });
      if (region === null) throw new Error('no region');
      expect(region.zeroed).toBe(true);
      region.bytes.fill(i + 1);
      return { name: `e${i}`, seed: i, fingerprint: 1, dataSize: 6 << 20, region };
    });
    storage.persist(entries);
    expect(storage.memoryStats().mappings).toBeLessThan(7);
    storage.close();
    const { expected, actual } = compactSizeOf(path);
    expect(actual).toBe(expected);
  });
});

describe('heap fallback accounting and the disk budget', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('counts unnamed entries on the heap per reason, in entries and bytes', () => {
    const storage = new FileStorage({ path: join(dir, 'unnamed.xpwc') });
    storage.open({ hasEntries: false });
    const region = storage.reserve(1000, { persistable: false });
    expect(region?.reservedBytes).toBeGreaterThanOrEqual(1000);
    expect(storage.stats().fallback).toEqual({
      unnamed: { count: 1, bytes: region?.reservedBytes },
    });
    storage.close();
  });

  it("counts a heap-only cache's reservations under the reason it is given ('no-path')", () => {
    const storage = new HeapStorage({ fallbackReason: 'no-path' });
    const cache = new XNNWeightsCache({ storage });
    buildModel(cache, SPEC);
    const { heapBytes, fallback } = storage.stats();
    expect(fallback).toEqual({ 'no-path': { count: 6, bytes: heapBytes } });
    expect(new HeapStorage().stats().fallback).toBeUndefined();
    cache.close();
  });

  it('sends entries past maxFileBytes to the heap as over-budget and keeps the file within it', async () => {
    const path = join(dir, 'budget.xpwc');
    const maxFileBytes = 4096 + 16 * 1024 + 3 * 16 * 1024; // header, trailer room, 3 layers
    const warnings = captureWarnings();
    const { storage, cache } = open(path, { maxFileBytes });
    const { ops } = buildModel(cache, SPEC);
    expect(outputHashes(ops, SPEC.inputChannels)).toEqual(reference);
    const stats = storage.stats();
    expect(stats.maxFileBytes).toBe(maxFileBytes);
    const over = stats.fallback?.['over-budget'];
    expect(over?.count).toBe(3);
    expect(over?.bytes).toBe(stats.heapBytes);
    cache.close();
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_OVER_BUDGET');
    expect(statSync(path).size).toBeLessThanOrEqual(maxFileBytes);
  });

  it('evicts least recently used entries at close to fit a smaller budget', () => {
    const path = join(dir, 'evict.xpwc');
    const first = open(path);
    buildModel(first.cache, SPEC);
    first.cache.close();
    const full = statSync(path).size;

    // A later run uses three of the six layers under a budget that cannot hold all six.
    const used: ModelSpec = { ...SPEC, layers: [0, 1, 2] };
    const maxFileBytes = Math.floor(full * 0.75);
    const second = open(path, { maxFileBytes });
    resetPackingStats();
    buildModel(second.cache, used);
    expect(packingStats().calls).toBe(0);
    second.cache.close();
    expect(statSync(path).size).toBeLessThanOrEqual(maxFileBytes);
    const evicted = second.storage.stats().evicted;
    expect(evicted?.entries).toBeGreaterThan(0);
    expect(evicted?.bytes).toBeGreaterThan(0);

    // The layers in use survived; the unused ones were evicted first.
    resetPackingStats();
    const third = open(path);
    buildModel(third.cache, used);
    expect(packingStats().calls).toBe(0);
    third.cache.close();
  });
});
