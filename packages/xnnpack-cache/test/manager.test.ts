import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  FileStorage,
  packingStats,
  resetPackingStats,
  WeightsCacheError,
  type XNNWeightsCache,
  XNNWeightsCacheManager,
} from '../src/index.js';
import { captureWarnings, makeTempDir } from './file-helpers.js';
import { buildModel, type ModelSpec, modelWeights, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 2), inputChannels: 32, outputChannels: 16 };

describe('XNNWeightsCacheManager', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('hands out one instance per path and one shared heap-only instance for ""', () => {
    const manager = new XNNWeightsCacheManager();
    const a = manager.acquire(join(dir, 'a.xpwc'));
    const a2 = manager.acquire(join(dir, '.', 'a.xpwc'));
    const b = manager.acquire(join(dir, 'b.xpwc'));
    const heap = manager.acquire('');
    const heap2 = manager.acquire('');
    expect(a2.cache).toBe(a.cache);
    expect(b.cache).not.toBe(a.cache);
    expect(heap2.cache).toBe(heap.cache);
    expect(heap.cache.storage).not.toBeInstanceOf(FileStorage);
    expect(a.cache.storage).toBeInstanceOf(FileStorage);
    for (const handle of [a, a2, b, heap, heap2]) handle.release();
    expect(manager.paths()).toEqual([]);
  });

  it('opens a path with the budget its first holder asks for; another budget is refused', () => {
    const manager = new XNNWeightsCacheManager({ maxFileBytes: 1 << 30 });
    const path = join(dir, 'budget.xpwc');
    const first = manager.acquire(path, { maxFileBytes: 1 << 20 });
    expect(first.cache.stats().maxFileBytes).toBe(1 << 20);
    // The same budget, or none asked for: the open instance.
    const same = manager.acquire(path, { maxFileBytes: 1 << 20 });
    const unasked = manager.acquire(path);
    expect(same.cache).toBe(first.cache);
    expect(unasked.cache).toBe(first.cache);
    let error: unknown;
    try {
      manager.acquire(path, { maxFileBytes: null });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WeightsCacheError);
    expect((error as WeightsCacheError).code).toBe('ERR_CACHE_BUDGET_CONFLICT');
    // Without a budget of its own, a path takes the manager's.
    const other = manager.acquire(join(dir, 'budget-default.xpwc'));
    expect(other.cache.stats().maxFileBytes).toBe(1 << 30);
    expect(() => manager.acquire(path, null as never)).toThrow(WeightsCacheError);
    for (const handle of [first, same, unasked, other]) handle.release();
    expect(manager.paths()).toEqual([]);
  });

  it('closes an instance when its last holder releases; release is idempotent', () => {
    const manager = new XNNWeightsCacheManager();
    const path = join(dir, 'release.xpwc');
    const first = manager.acquire(path);
    const second = manager.acquire(path);
    buildModel(first.cache, SPEC);
    first.release();
    first.release(); // no effect: second still holds the instance
    expect(manager.paths()).toHaveLength(1);
    expect(first.cache.getPackedDataNames()).toHaveLength(2);
    second.release();
    expect(manager.paths()).toEqual([]);
    expect(first.cache.getPackedDataNames()).toEqual([]); // closed
    // A new acquire creates a new instance that loads the saved file.
    resetPackingStats();
    const again = manager.acquire(path);
    expect(again.cache).not.toBe(first.cache);
    buildModel(again.cache, SPEC);
    expect(packingStats().calls).toBe(0);
    again.release();
  });

  it('saveAll saves every path-backed instance, continues past failures, returns the first error', async () => {
    const manager = new XNNWeightsCacheManager();
    const badPath = join(dir, 'bad.xpwc');
    const bad = manager.acquire(badPath);
    const good = manager.acquire(join(dir, 'good.xpwc'));
    const heap = manager.acquire('');
    for (const handle of [bad, good, heap]) handle.cache.initializeForRuntime(modelWeights(SPEC));
    // Pack without finalizing, so the saves happen in saveAll.
    for (const handle of [bad, good, heap]) packOne(handle.cache, 'layer0');
    expect(manager.saveAll()).toBeUndefined();
    expect(good.cache.getPackedDataMeta('layer0.weightlayer0.bias')?.fromLoad).toBe(true);
    expect(heap.cache.getPackedDataMeta('layer0.weightlayer0.bias')?.fromLoad).toBe(false);

    // `bad`'s path now names a folder: its next save cannot reach a cache file.
    packOne(bad.cache, 'layer1');
    packOne(good.cache, 'layer1');
    renameSync(badPath, `${badPath}.moved`);
    mkdirSync(badPath);
    const warnings = captureWarnings();
    const error = manager.saveAll();
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(error).toBeInstanceOf(WeightsCacheError);
    expect((error as WeightsCacheError).code).toBe('ERR_CACHE_SAVE_FAILED');
    // The failure did not stop the other save.
    expect(good.cache.getPackedDataMeta('layer1.weightlayer1.bias')?.fromLoad).toBe(true);
    expect(bad.cache.getPackedDataMeta('layer1.weightlayer1.bias')?.fromLoad).toBe(false);
    for (const handle of [good, bad, heap]) handle.release();
  });
});

function packOne(cache: XNNWeightsCache, layer = 'layer0'): void {
  createFullyConnectedNcF32({
    cache,
    inputChannels: SPEC.inputChannels,
    outputChannels: SPEC.outputChannels,
    kernel: cache.loadUnpackedData(`${layer}.weight`),
    bias: cache.loadUnpackedData(`${layer}.bias`),
  });
}
