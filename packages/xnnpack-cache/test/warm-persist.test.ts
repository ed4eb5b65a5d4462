import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FileStorage, type PackedRegion, XNNWeightsCache } from '../src/index.js';
import { makeTempDir } from './file-helpers.js';
import { buildModel, type ModelSpec, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 4), inputChannels: 32, outputChannels: 16 };

describe('a warm start persists nothing it does not need', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('needsEntries is false after a load, true once a region is reserved or with a budget', () => {
    const path = join(dir, 'needs.xpwc');
    const first = new FileStorage({ path });
    first.open({ hasEntries: false });
    const region = first.reserve(100, { persistable: true }) as PackedRegion;
    expect(first.needsEntries()).toBe(true);
    first.persist([{ name: 'a', seed: 1, fingerprint: 2, dataSize: 100, region }]);
    expect(first.needsEntries()).toBe(false);
    first.close();

    const second = new FileStorage({ path });
    expect(second.open({ hasEntries: false }).map((e) => e.name)).toEqual(['a']);
    expect(second.needsEntries()).toBe(false);
    second.reserve(10, { persistable: true });
    expect(second.needsEntries()).toBe(true);
    second.close();

    // A budget keeps the use order of every entry, so it always wants the list.
    const budgeted = new FileStorage({ path, maxFileBytes: 1 << 30 });
    budgeted.open({ hasEntries: false });
    expect(budgeted.needsEntries()).toBe(true);
    budgeted.close();
  });

  it('a full hit hands storage an empty list and leaves the file byte for byte', () => {
    const path = join(dir, 'hit.xpwc');
    const cold = new XNNWeightsCache({ path });
    buildModel(cold, SPEC);
    cold.close();
    const before = readFileSync(path);

    const storage = new FileStorage({ path });
    const persist = vi.spyOn(storage, 'persist');
    const warm = new XNNWeightsCache({ storage });
    const { names } = buildModel(warm, SPEC);
    expect(warm.stats().hits).toBe(SPEC.layers.length);
    expect(names).toHaveLength(SPEC.layers.length);
    expect(persist).toHaveBeenCalledTimes(1);
    expect(persist.mock.calls[0]?.[0]).toEqual([]);
    warm.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
