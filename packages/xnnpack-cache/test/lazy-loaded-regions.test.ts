// A warm start records every loaded entry but makes an entry's region (and its byte view)
// only when something reads it: an operator's first run, a byte compare, a commit.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { PackedSlots } from '../src/cache/packed-slots.js';
import {
  createFullyConnectedNcF32,
  createFullyConnectedNcF32ByName,
  FileStorage,
  type FullyConnectedOperator,
  HeapStorage,
  InMemoryNamedDataMap,
  type LoadedEntries,
  type PackedRegion,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { operatorAt } from '../src/operators/fully-connected.js';
import { operatorSetup } from '../src/operators/operator-setup.js';
import { LoadedEntrySet } from '../src/storage/entry-loader.js';
import { loadedColumnsOf } from '../src/storage/packed-storage.js';
import { makeTempDir } from './file-helpers.js';
import { randomFloats } from './reference.js';

const LAYERS = 6;
const NC = 8;
const KC = 12;
const code = (c: string) => expect.objectContaining({ code: c });

function weights(): InMemoryNamedDataMap {
  const map = new InMemoryNamedDataMap();
  for (let layer = 0; layer < LAYERS; layer++) {
    map.set(tensorView(`l${layer}.w`, [NC, KC], randomFloats(NC * KC, 10 + layer)));
    map.set(tensorView(`l${layer}.b`, [NC], randomFloats(NC, 100 + layer)));
  }
  return map;
}

/** One build of every layer through `cache`, by name; its operators and the names it holds. */
function build(cache: XNNWeightsCache, map: InMemoryNamedDataMap) {
  cache.initializeForRuntime(map);
  const operators: FullyConnectedOperator[] = [];
  for (let layer = 0; layer < LAYERS; layer++) {
    operators.push(
      createFullyConnectedNcF32ByName({
        cache,
        inputChannels: KC,
        outputChannels: NC,
        kernel: `l${layer}.w`,
        bias: `l${layer}.b`,
      }),
    );
  }
  return { operators, names: cache.finalizeForRuntime() };
}

function fileCache(path: string): XNNWeightsCache {
  return new XNNWeightsCache({ storage: new FileStorage({ path }) });
}

describe('loaded entries', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  afterEach(() => vi.restoreAllMocks());
  const input = randomFloats(2 * KC, 7);

  /** A cache file holding every layer, and each layer's output for `input` when packed. */
  function coldFile(name: string): { path: string; outputs: Float32Array[] } {
    const path = join(dir, name);
    const cold = fileCache(path);
    const { operators, names } = build(cold, weights());
    const outputs = operators.map((op) => op.run(input, 2));
    cold.deletePackedData(names);
    cold.close();
    return { path, outputs };
  }

  it('get no region until an operator first runs, then the bytes of the file', () => {
    const { path, outputs } = coldFile('lazy.xpwc');
    const made = vi.spyOn(LoadedEntrySet.prototype, 'region');
    const warm = fileCache(path);
    const { operators, names } = build(warm, weights());
    expect(operators.every((op) => op.cacheHit)).toBe(true);
    expect(made).not.toHaveBeenCalled();
    expect(warm.stats().packedBytes).toBeGreaterThan(0);

    expect(operators[2]?.run(input, 2)).toEqual(outputs[2]);
    expect(made).toHaveBeenCalledTimes(1);
    // The region is made once: the next run and offsetToAddr reuse it.
    operators[2]?.run(input, 2);
    const bytes = warm.offsetToAddr(operators[2]?.offset as number);
    expect(made).toHaveBeenCalledTimes(1);
    expect(bytes.byteLength).toBe(warm.packedSizeAt(operators[2]?.offset as number));
    operators.forEach((op, layer) => {
      expect(op.run(input, 2)).toEqual(outputs[layer]);
    });
    warm.deletePackedData(names);
    warm.close();
  });

  it('are released, kept and committed as before when their regions were never made', () => {
    const { path, outputs } = coldFile('release.xpwc');
    const warm = fileCache(path);
    const first = build(warm, weights());
    warm.deletePackedData(first.names);
    // Loaded entries stay at refCount 0; a new layer commits the index with all of them.
    warm.initializeForRuntime(weights());
    const extra = createFullyConnectedNcF32({
      cache: warm,
      inputChannels: KC,
      outputChannels: NC,
      kernel: randomFloats(NC * KC, 999),
    });
    expect(extra.cacheHit).toBe(false);
    warm.deletePackedData(warm.finalizeForRuntime());
    warm.close();

    const again = fileCache(path);
    const { operators, names } = build(again, weights());
    expect(operators.every((op) => op.cacheHit)).toBe(true);
    operators.forEach((op, layer) => {
      expect(op.run(input, 2)).toEqual(outputs[layer]);
    });
    again.deletePackedData(names);
    again.close();
  });

  it('report their size by offset; a dead or foreign offset is ERR_CACHE_INVALID_OFFSET', () => {
    const { path } = coldFile('sizes.xpwc');
    const warm = fileCache(path);
    const { operators, names } = build(warm, weights());
    const offset = operators[0]?.offset as number;
    expect(warm.packedSizeAt(offset)).toBe(warm.getPackedDataMeta(names[0] as string)?.dataSize);
    for (const bad of [-1, 1.5, 10_000, Number.NaN]) {
      expect(() => warm.packedSizeAt(bad)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
      expect(() => warm.offsetToAddr(bad)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
    }
    warm.deletePackedData(names);
    warm.close();
    expect(() => warm.packedSizeAt(offset)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
  });

  it('refuse an operator over a packed entry smaller than its layout, by size', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(new InMemoryNamedDataMap());
    const short = cache.reserveSpace(64) as Uint8Array;
    const key = { seed: 1, fingerprint: 0, kernel: {}, bias: null };
    const offset = cache.lookUpOrInsert(key, short, 64);
    const setup = operatorSetup({ cache, inputChannels: KC, outputChannels: NC });
    expect(() => operatorAt(cache, setup, offset, true)).toThrowError(
      code('ERR_CACHE_ENTRY_TOO_SMALL'),
    );
  });
});

describe('packed slots of loaded sets', () => {
  /** A loaded set of `sizes.length` entries that counts the regions it makes. */
  function loadedSet(tag: string, sizes: number[]): LoadedEntries & { made: string[] } {
    const made: string[] = [];
    return {
      made,
      length: sizes.length,
      fields: (i) => ({ name: `${tag}${i}`, seed: 1, dataSize: sizes[i] as number }),
      region: (i) => {
        made.push(`${tag}${i}`);
        return { bytes: new Uint8Array(sizes[i] as number), reservedBytes: 4096 };
      },
    };
  }

  it('make each region once, from the set its offset belongs to, also between other slots', () => {
    const slots = new PackedSlots();
    const own: PackedRegion = { bytes: new Uint8Array(8), reservedBytes: 8 };
    expect(slots.push(own, 8, null)).toBe(0);
    const a = loadedSet('a', [16, 32]);
    expect(slots.pushLoaded(a, loadedColumnsOf(a))).toBe(1);
    expect(slots.push(own, 8, 'x')).toBe(3);
    const b = loadedSet('b', [64, 128]);
    expect(slots.pushLoaded(b, loadedColumnsOf(b))).toBe(4);
    expect(slots.sizeAt(5)).toBe(128);
    expect(a.made).toEqual([]);
    expect(slots.regionAt(5).bytes.byteLength).toBe(128);
    expect(slots.regionAt(1).bytes.byteLength).toBe(16);
    expect(slots.regionAt(5)).toBe(slots.regionAt(5));
    expect([a.made, b.made]).toEqual([['a0'], ['b1']]);
    expect(slots.totals()).toEqual({ packedBytes: 8 + 16 + 32 + 8 + 64 + 128, unnamedEntries: 1 });

    // A slot released before anything read it: its region is made for the storage to take back.
    const storage = new HeapStorage();
    const released: PackedRegion[] = [];
    storage.release = (region) => released.push(region);
    slots.release(2, storage);
    expect(a.made).toEqual(['a0', 'a1']);
    expect(released[0]?.bytes.byteLength).toBe(32);
    expect(() => slots.regionAt(2)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
    expect(() => slots.sizeAt(2)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
    slots.release(2, storage);
    expect(released).toHaveLength(1);
    slots.clear();
    expect(() => slots.regionAt(4)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
  });
});
