// A warm start records every loaded entry but makes an entry's region (and its byte view)
// only when something reads it: an operator's first run, a byte compare, a commit.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  createFullyConnectedNcF32,
  createFullyConnectedNcF32ByName,
  FileStorage,
  type FullyConnectedOperator,
  InMemoryNamedDataMap,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { operatorAt } from '../src/operators/fully-connected.js';
import { operatorSetup } from '../src/operators/operator-setup.js';
import { LoadedEntrySet } from '../src/storage/entry-loader.js';
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
