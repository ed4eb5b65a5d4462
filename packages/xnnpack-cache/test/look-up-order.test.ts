// A look-up first tries the entry after the last one found (a warm start repeats the cold
// start's order), then the name map. These tests check that any other order, and entries
// that moved (repacked, freed, listed twice), still give exactly the hits and misses that
// ExecuTorch's naming (kernel name + bias name) gives.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeTrailer } from '@memlayer/cache-format';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  InMemoryNamedDataMap,
  type LoadedEntries,
  NOT_FOUND,
  type OpenContext,
  type StoredEntry,
  type TensorView,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { makeTempDir } from './file-helpers.js';
import { FINGERPRINT, insert, key, PreloadedStorage, SEED } from './helpers.js';
import { randomFloats } from './reference.js';

const LAYERS = 12;
const kernelName = (i: number) => `k${i.toString(16).padStart(2, '0')}`;
const biasName = (i: number) => `b${i.toString(16).padStart(2, '0')}`;

function layerMap(): InMemoryNamedDataMap {
  const map = new InMemoryNamedDataMap();
  for (let i = 0; i < LAYERS; i++) {
    map.set(tensorView(kernelName(i), [2, 2], new Float32Array([i, 1, 2, 3])));
    map.set(tensorView(biasName(i), [2], new Float32Array([i, 5])));
  }
  return map;
}

/** PreloadedStorage presenting its entries as a file storage does: openLoaded, regions on demand. */
class LoadedSetStorage extends PreloadedStorage {
  openLoaded(context: OpenContext): LoadedEntries {
    const entries = this.open(context);
    return {
      length: entries.length,
      fields: (i) => entries[i] as StoredEntry,
      region: (i) => (entries[i] as StoredEntry).region,
    };
  }
}

/** Presents its first two entries at the first open and the rest at the next, whatever the cache holds. */
class LoadsTwiceStorage extends PreloadedStorage {
  #sets: StoredEntry[][] | null = null;

  openLoaded(_context: OpenContext): LoadedEntries {
    if (this.#sets === null) {
      const all = [...this.open({ hasEntries: false })];
      this.#sets = [all.slice(0, 2), all.slice(2)];
    }
    const entries = this.#sets.shift() ?? [];
    return {
      length: entries.length,
      fields: (i) => entries[i] as StoredEntry,
      region: (i) => (entries[i] as StoredEntry).region,
    };
  }
}

/** Bytes of entry i as a storage presents them: each entry's own fill, so a wrong row shows. */
const bytesOf = (i: number) => new Uint8Array(64).fill(i + 1);

/** A storage presenting the layers' entries in `order` (an index written in another order). */
function preloaded(order: readonly number[]): PreloadedStorage {
  return new PreloadedStorage(
    order.map((i) => ({
      name: kernelName(i) + biasName(i),
      bytes: bytesOf(i),
      seed: SEED,
      fingerprint: FINGERPRINT,
    })),
  );
}

/** Looks layer i up; returns the first byte of the entry found, or NOT_FOUND. */
function lookUpLayer(cache: XNNWeightsCache, i: number, seed = SEED): number {
  const kernel = cache.loadUnpackedData(kernelName(i));
  const bias = cache.loadUnpackedData(biasName(i));
  const offset = cache.lookUp(key(kernel, bias, seed));
  return offset === NOT_FOUND ? NOT_FOUND : (cache.offsetToAddr(offset)[0] as number);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** A fixed shuffle (as a hash map's iteration order would be). */
const SHUFFLED = [7, 2, 11, 0, 5, 9, 1, 10, 3, 8, 6, 4];

describe('look-up order', () => {
  for (const [what, stored, looked] of [
    ['in the order saved', range(LAYERS), range(LAYERS)],
    ['in reverse', range(LAYERS), range(LAYERS).reverse()],
    ['saved in hash-map order (an ExecuTorch file)', SHUFFLED, range(LAYERS)],
    ['shuffled, with a repeat', range(LAYERS), [...SHUFFLED, 7, 7, 8]],
  ] as const) {
    it(`finds every entry when looked up ${what}`, () => {
      const cache = new XNNWeightsCache({ storage: preloaded(stored) });
      cache.initializeForRuntime(layerMap());
      for (const i of looked) expect(lookUpLayer(cache, i)).toBe(i + 1);
      expect(cache.stats()).toMatchObject({ hits: looked.length, misses: 0 });
      cache.finalizeForRuntime();
    });
  }

  it('misses a pair whose names are not one entry, even next to the hinted row', () => {
    const cache = new XNNWeightsCache({ storage: preloaded(range(LAYERS)) });
    cache.initializeForRuntime(layerMap());
    expect(lookUpLayer(cache, 0)).toBe(1);
    // Row 1 is k01b01: the kernel of it with the bias of another layer is no entry.
    const kernel = cache.loadUnpackedData(kernelName(1));
    const bias = cache.loadUnpackedData(biasName(2));
    expect(cache.lookUp(key(kernel, bias))).toBe(NOT_FOUND);
    // The kernel alone (no bias) names k01, which is no entry either.
    expect(cache.lookUp(key(kernel, null))).toBe(NOT_FOUND);
    expect(lookUpLayer(cache, 1)).toBe(2);
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 2 });
  });

  it('names an entry by the concatenation only: another split of the same name hits', () => {
    const storage = new PreloadedStorage([
      { name: 'abc', bytes: bytesOf(0), seed: SEED, fingerprint: FINGERPRINT },
      { name: 'abcd', bytes: bytesOf(1), seed: SEED, fingerprint: FINGERPRINT },
    ]);
    const cache = new XNNWeightsCache({ storage });
    cache.initializeForRuntime(
      new InMemoryNamedDataMap([
        tensorView('ab', [1], new Float32Array([1])),
        tensorView('c', [1], new Float32Array([2])),
        tensorView('a', [1], new Float32Array([3])),
        tensorView('bc', [1], new Float32Array([4])),
        tensorView('bcd', [1], new Float32Array([5])),
      ]),
    );
    const view = (name: string) => cache.loadUnpackedData(name);
    const first = (offset: number) => cache.offsetToAddr(offset)[0];
    expect(first(cache.lookUp(key(view('ab'), view('c'))))).toBe(1);
    // The hint now points at "abcd", which "a" + "bc" is not: the map finds "abc".
    expect(first(cache.lookUp(key(view('a'), view('bc'))))).toBe(1);
    expect(first(cache.lookUp(key(view('a'), view('bcd'))))).toBe(2);
    expect(cache.lookUp(key(view('ab'), view('bcd')))).toBe(NOT_FOUND);
  });

  it.each([
    ['a list of stored entries', PreloadedStorage],
    ['loaded entries with regions made when read', LoadedSetStorage],
  ])('serves the later of two entries a loaded index lists under one name (%s)', (_, Storage) => {
    const storage = new Storage([
      { name: 'k00b00', bytes: bytesOf(0), seed: SEED, fingerprint: FINGERPRINT },
      { name: 'k01b01', bytes: bytesOf(1), seed: SEED, fingerprint: FINGERPRINT },
      { name: 'k00b00', bytes: bytesOf(9), seed: SEED, fingerprint: FINGERPRINT },
    ]);
    const cache = new XNNWeightsCache({ storage });
    cache.initializeForRuntime(layerMap());
    // The hint starts at the first row, which the later duplicate replaced.
    expect(lookUpLayer(cache, 0)).toBe(10);
    expect(lookUpLayer(cache, 1)).toBe(2);
    expect(lookUpLayer(cache, 0)).toBe(10);
    expect(cache.getPackedDataNames()).toEqual(['k00b00', 'k01b01']);
  });

  it('serves the later of two entries a v2 file lists under one name, as ExecuTorch does', () => {
    const { dir, cleanup } = makeTempDir();
    try {
      // Entries at 0, 4096 and 8192 (a page each): k00b00, k01b01, then k00b00 again.
      const listed = [0, 1, 9].map((fill, i) => ({
        name: i === 1 ? 'k01b01' : 'k00b00',
        fileOffset: i * 4096,
        dataSize: 64,
        seed: SEED,
        fill,
      }));
      const trailer = encodeTrailer(listed, { version: 2, indexStart: 3 * 4096 });
      const file = new Uint8Array(3 * 4096 + trailer.byteLength);
      for (const entry of listed) file.set(bytesOf(entry.fill), entry.fileOffset);
      file.set(trailer, 3 * 4096);
      const path = join(dir, 'listed-twice.bin');
      writeFileSync(path, file);

      const cache = new XNNWeightsCache({ path, format: 2 });
      cache.initializeForRuntime(layerMap());
      expect(lookUpLayer(cache, 0)).toBe(10);
      expect(lookUpLayer(cache, 1)).toBe(2);
      expect(cache.getPackedDataNames()).toEqual(['k00b00', 'k01b01']);
      cache.close();
      // Read only: the file is byte for byte as it was.
      expect(new Uint8Array(readFileSync(path))).toEqual(file);
    } finally {
      cleanup();
    }
  });

  it('adds the entries of a second load after those of the first', () => {
    const storage = new LoadsTwiceStorage(
      [0, 1, 2, 3].map((i) => ({
        name: kernelName(i) + biasName(i),
        bytes: bytesOf(i),
        seed: SEED,
        fingerprint: FINGERPRINT,
      })),
    );
    const cache = new XNNWeightsCache({ storage });
    cache.initializeForRuntime(layerMap());
    expect([0, 1, 2].map((i) => lookUpLayer(cache, i))).toEqual([1, 2, NOT_FOUND]);
    const held = cache.finalizeForRuntime();
    expect(held).toEqual([kernelName(0) + biasName(0), kernelName(1) + biasName(1)]);
    cache.initializeForRuntime(layerMap());
    // The second load's rows follow the first's: every entry is found, each with its bytes.
    expect([3, 2, 1, 0].map((i) => lookUpLayer(cache, i))).toEqual([4, 3, 2, 1]);
    expect(cache.getPackedDataNames()).toEqual(
      [0, 1, 2, 3].map((i) => kernelName(i) + biasName(i)),
    );
  });

  it('serves the repacked entry, not the row it replaced, when the order repeats', () => {
    const cache = new XNNWeightsCache();
    const map = layerMap();
    const views = (i: number): [TensorView, TensorView] => [
      cache.loadUnpackedData(kernelName(i)),
      cache.loadUnpackedData(biasName(i)),
    ];
    cache.initializeForRuntime(map);
    for (const i of [0, 1, 2]) insert(cache, key(...views(i)), i + 1);
    const held = cache.finalizeForRuntime();

    // Layer 1 is repacked under another seed (another XNNPACK): a new row for its name.
    cache.initializeForRuntime(map);
    expect(lookUpLayer(cache, 0)).toBe(1);
    expect(lookUpLayer(cache, 1, SEED + 1)).toBe(NOT_FOUND);
    insert(cache, key(...views(1), SEED + 1), 42);
    cache.finalizeForRuntime();

    // Same order again: after layer 0 the hint is layer 1's old row, which must not serve.
    cache.initializeForRuntime(map);
    expect(lookUpLayer(cache, 0)).toBe(1);
    expect(lookUpLayer(cache, 1, SEED + 1)).toBe(42);
    expect(lookUpLayer(cache, 2)).toBe(3);
    expect(lookUpLayer(cache, 1)).toBe(NOT_FOUND);
    cache.finalizeForRuntime();
    cache.deletePackedData(held);
  });

  it('inserts a missed pair under its own name after a hit of another pair in between', () => {
    const cache = new XNNWeightsCache({ storage: preloaded([1]) });
    cache.initializeForRuntime(layerMap());
    const missed = key(cache.loadUnpackedData(kernelName(0)), cache.loadUnpackedData(biasName(0)));
    expect(cache.lookUp(missed)).toBe(NOT_FOUND);
    expect(lookUpLayer(cache, 1)).toBe(2);
    const offset = insert(cache, missed, 7);
    expect(cache.offsetToAddr(offset)[0]).toBe(7);
    expect(cache.getPackedDataMeta('k00b00')?.offset).toBe(offset);
    expect(cache.getPackedDataMeta('k01b01')?.dataSize).toBe(64);
    expect(cache.getPackedDataNames()).toEqual(['k01b01', 'k00b00']);
  });

  it('hits a missed pair once it was inserted, and misses it again once freed', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(layerMap());
    expect(lookUpLayer(cache, 3)).toBe(NOT_FOUND);
    const kernel = cache.loadUnpackedData(kernelName(3));
    insert(cache, key(kernel, cache.loadUnpackedData(biasName(3))), 4);
    expect(lookUpLayer(cache, 3)).toBe(4);
    cache.deletePackedData(cache.finalizeForRuntime());
    cache.initializeForRuntime(layerMap());
    expect(lookUpLayer(cache, 3)).toBe(NOT_FOUND);
  });

  it('misses an entry that was freed, when the next build repeats the order', () => {
    const cache = new XNNWeightsCache();
    const map = layerMap();
    cache.initializeForRuntime(map);
    for (const i of [0, 1]) {
      const kernel = cache.loadUnpackedData(kernelName(i));
      insert(cache, key(kernel, cache.loadUnpackedData(biasName(i))), i + 1);
    }
    cache.deletePackedData(cache.finalizeForRuntime());
    expect(cache.getPackedDataNames()).toEqual([]);

    cache.initializeForRuntime(map);
    expect(lookUpLayer(cache, 0)).toBe(NOT_FOUND);
    expect(lookUpLayer(cache, 1)).toBe(NOT_FOUND);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 2 });
  });
});

describe('look-up order over a cache file', () => {
  let dir: { dir: string; cleanup: () => void };
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => dir.cleanup());

  /** Builds the layers in `order` through a file cache; returns each layer's output bits. */
  function start(path: string, order: readonly number[]) {
    const map = new InMemoryNamedDataMap();
    for (let i = 0; i < LAYERS; i++) {
      map.set(tensorView(kernelName(i), [4, 8], randomFloats(32, i)));
      map.set(tensorView(biasName(i), [4], randomFloats(4, 100 + i)));
    }
    const cache = new XNNWeightsCache({ path });
    cache.initializeForRuntime(map);
    const ops = new Map<number, ReturnType<typeof createFullyConnectedNcF32>>();
    for (const i of order) {
      ops.set(
        i,
        createFullyConnectedNcF32({
          cache,
          inputChannels: 8,
          outputChannels: 4,
          kernel: cache.loadUnpackedData(kernelName(i)),
          bias: cache.loadUnpackedData(biasName(i)),
        }),
      );
    }
    const names = cache.finalizeForRuntime();
    const x = randomFloats(8, 7);
    const outputs = range(LAYERS).map((i) => [
      ...new Uint32Array(ops.get(i)?.run(x, 1).buffer ?? new ArrayBuffer(0)),
    ]);
    const stats = cache.stats();
    cache.deletePackedData(names);
    cache.close();
    return { outputs, stats };
  }

  it('hits every layer of a warm start in any order, with the cold start outputs', () => {
    const path = join(dir.dir, 'order.xpwc');
    const cold = start(path, range(LAYERS));
    expect(cold.stats).toMatchObject({ hits: 0, entries: LAYERS });
    for (const order of [range(LAYERS), SHUFFLED, range(LAYERS).reverse()]) {
      const warm = start(path, order);
      expect(warm.stats).toMatchObject({ hits: LAYERS, misses: 0, entries: LAYERS });
      expect(warm.outputs).toEqual(cold.outputs);
    }
  });
});
