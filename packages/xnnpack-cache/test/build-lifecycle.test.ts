import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  HeapStorage,
  InMemoryNamedDataMap,
  type NamedDataMap,
  type PackedRegion,
  type StorageStats,
  type TensorView,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { randomFloats } from './reference.js';

const code = (c: string) => expect.objectContaining({ code: c });

function layers(count: number): InMemoryNamedDataMap {
  const map = new InMemoryNamedDataMap();
  for (let i = 0; i < count; i++) {
    map.set(tensorView(`l${i}.weight`, [8, 8], randomFloats(64, i + 1)));
    map.set(tensorView(`l${i}.bias`, [8], randomFloats(8, i + 100)));
  }
  return map;
}

function releasing(map: NamedDataMap, released: string[]): NamedDataMap {
  return {
    get: (name) => map.get(name),
    names: () => map.names(),
    release: (view: TensorView) => released.push(view.name),
  };
}

function createLayer(cache: XNNWeightsCache, i: number) {
  return createFullyConnectedNcF32({
    cache,
    inputChannels: 8,
    outputChannels: 8,
    kernel: cache.loadUnpackedData(`l${i}.weight`),
    bias: cache.loadUnpackedData(`l${i}.bias`),
  });
}

describe('operators belong to a build', () => {
  it('fails with ERR_CACHE_INVALID_STATE after finalizeForRuntime (lookUp, reserveSpace, insert)', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(layers(2));
    createLayer(cache, 0);
    const view = cache.loadUnpackedData('l1.weight');
    cache.finalizeForRuntime();
    const key = { seed: 1, kernel: view, bias: null, fingerprint: 1 };
    expect(() => cache.lookUp(key)).toThrowError(code('ERR_CACHE_INVALID_STATE'));
    expect(() => cache.reserveSpace(64)).toThrowError(code('ERR_CACHE_INVALID_STATE'));
    expect(() => cache.lookUpOrInsert(key, null, 0)).toThrowError(code('ERR_CACHE_INVALID_STATE'));
    expect(() =>
      createFullyConnectedNcF32({
        cache,
        inputChannels: 8,
        outputChannels: 8,
        kernel: new Float32Array(64),
      }),
    ).toThrowError(code('ERR_CACHE_INVALID_STATE'));
    // A new build may create operators again.
    cache.initializeForRuntime(layers(2));
    expect(createLayer(cache, 1).cacheHit).toBe(false);
  });
});

describe('unpacked views', () => {
  it('a released view is unnamed to look-ups until it is loaded again, and is released once', () => {
    const cache = new XNNWeightsCache();
    const released: string[] = [];
    cache.initializeForRuntime(releasing(layers(1), released));
    const kernel = cache.loadUnpackedData('l0.weight');
    const key = { seed: 1, kernel, bias: null, fingerprint: 1 };
    expect(cache.lookUp(key)).toBe(-1);
    expect(cache.lastLookUpUnnamed).toBe(false);
    cache.releaseUnpackedData(kernel);
    cache.releaseUnpackedData(kernel);
    expect(released).toEqual(['l0.weight']);
    expect(cache.lookUp(key)).toBe(-1);
    expect(cache.lastLookUpUnnamed).toBe(true);
    // Loaded again: named again, and released again at the end of the build.
    expect(cache.loadUnpackedData('l0.weight')).toBe(kernel);
    cache.lookUp(key);
    expect(cache.lastLookUpUnnamed).toBe(false);
    cache.finalizeForRuntime();
    expect(released).toEqual(['l0.weight', 'l0.weight']);
  });
});

describe('many unpacked views held at once', () => {
  it('30 views loaded before any operator keep their names, in any release order', () => {
    const count = 15;
    const cache = new XNNWeightsCache();
    const released: string[] = [];
    cache.initializeForRuntime(releasing(layers(count), released));
    // Every view first (more than the two slots hold), then the operators, last first.
    const views = Array.from({ length: count }, (_, i) => ({
      kernel: cache.loadUnpackedData(`l${i}.weight`),
      bias: cache.loadUnpackedData(`l${i}.bias`),
    }));
    for (let i = count - 1; i >= 0; i--) {
      const { kernel, bias } = views[i] as { kernel: TensorView; bias: TensorView };
      createFullyConnectedNcF32({ cache, inputChannels: 8, outputChannels: 8, kernel, bias });
      expect(cache.lastLookUpUnnamed).toBe(false);
    }
    // Each view was released once, by its operator, and each entry has its own pair's name.
    const expected = (suffixes: string[]) =>
      Array.from({ length: count }, (_, i) => suffixes.map((s) => `l${i}.${s}`).join('')).sort();
    expect([...released].sort()).toEqual([...expected(['weight']), ...expected(['bias'])].sort());
    expect([...cache.finalizeForRuntime()].sort()).toEqual(expected(['weight', 'bias']));
    expect(released).toHaveLength(2 * count);
  });

  it('views still held at finalize are released once each, wherever they were kept', () => {
    const cache = new XNNWeightsCache();
    const released: string[] = [];
    cache.initializeForRuntime(releasing(layers(10), released));
    const held = Array.from({ length: 10 }, (_, i) => cache.loadUnpackedData(`l${i}.weight`));
    // Loading the same view again keeps one hold; releasing some from the middle and the end.
    expect(cache.loadUnpackedData('l3.weight')).toBe(held[3]);
    cache.releaseUnpackedData(held[9] as TensorView);
    cache.releaseUnpackedData(held[2] as TensorView);
    expect(released).toEqual(['l9.weight', 'l2.weight']);
    const key = { seed: 1, kernel: held[2] as TensorView, bias: null, fingerprint: 1 };
    cache.lookUp(key);
    expect(cache.lastLookUpUnnamed).toBe(true);
    cache.lookUp({ ...key, kernel: held[8] as TensorView });
    expect(cache.lastLookUpUnnamed).toBe(false);
    cache.finalizeForRuntime();
    expect([...released].sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `l${i}.weight`).sort(),
    );
  });
});

describe('abortRuntime', () => {
  it('releases the bailed-out build at once: reservation, views, unheld entries', () => {
    const storage = new HeapStorage();
    const cache = new XNNWeightsCache({ storage });
    const map = layers(3);
    const released: string[] = [];
    // A first runtime that succeeds and holds l0.
    cache.initializeForRuntime(map);
    const kept = createLayer(cache, 0);
    cache.finalizeForRuntime();
    const heldBytes = cache.stats().heapBytes;

    // A second build packs l1, reserves for l2, then fails before inserting it.
    cache.initializeForRuntime(releasing(map, released));
    createLayer(cache, 1);
    createLayer(cache, 0);
    const pendingView = cache.loadUnpackedData('l2.weight');
    expect(cache.reserveSpace(4096)).not.toBeNull();
    expect(cache.stats().heapBytes).toBeGreaterThan(heldBytes + 4096);

    cache.abortRuntime();
    expect(released).toContain(pendingView.name);
    expect(cache.stats().heapBytes).toBe(heldBytes);
    expect(cache.getPackedDataNames()).toEqual(['l0.weightl0.bias']);
    expect(cache.getPackedDataMeta('l0.weightl0.bias')).toMatchObject({
      refCount: 1,
      inCurrentRuntime: false,
    });
    // The earlier runtime still runs; no operator can be created until the next build.
    expect(cache.isFinalized()).toBe(true);
    expect(kept.run(new Float32Array(8), 1)).toHaveLength(8);
    expect(() => cache.reserveSpace(64)).toThrowError(code('ERR_CACHE_INVALID_STATE'));
    // Aborting again, or without a build, does nothing.
    cache.abortRuntime();
    expect(cache.getPackedDataNames()).toEqual(['l0.weightl0.bias']);

    cache.initializeForRuntime(map);
    expect(createLayer(cache, 0).cacheHit).toBe(true);
    expect(createLayer(cache, 1).cacheHit).toBe(false);
    expect(cache.finalizeForRuntime()).toEqual(['l0.weightl0.bias', 'l1.weightl1.bias']);
  });

  it('closes the storage when the aborted build held the only entries', () => {
    let closes = 0;
    const storage = new (class extends HeapStorage {
      override close(): void {
        closes++;
        super.close();
      }
    })();
    const cache = new XNNWeightsCache({ storage });
    cache.initializeForRuntime(layers(1));
    createLayer(cache, 0);
    cache.abortRuntime();
    expect(cache.getPackedDataNames()).toEqual([]);
    expect(cache.stats().heapBytes).toBe(0);
    expect(closes).toBe(1);
  });
});

describe('storage seam', () => {
  class SeamStorage extends HeapStorage {
    readonly sealed: number[] = [];
    flushes = 0;
    zeroed = false;
    override reserve(n: number, options: { persistable: boolean }): PackedRegion | null {
      const region = super.reserve(n, options);
      if (region === null || !this.zeroed) return region;
      // Poison the bytes: a packer that trusts `zeroed` leaves them, one that fills does not.
      region.bytes.fill(0xff);
      return { ...region, zeroed: true };
    }
    seal(_region: PackedRegion, dataSize: number): void {
      this.sealed.push(dataSize);
    }
    flush(): void {
      this.flushes++;
    }
    override stats(): StorageStats {
      return {
        ...super.stats(),
        fallback: { 'lock-busy': { count: 2, bytes: 128 } },
        maxFileBytes: null,
        evicted: { entries: 1, bytes: 64 },
      };
    }
  }

  it('seals each inserted region once with its size, and flush reaches storage', () => {
    const storage = new SeamStorage();
    // An unknown CPU: every layer nr8kr1sr1.
    const cache = new XNNWeightsCache({ storage, cpuFeatures: null });
    cache.initializeForRuntime(layers(2));
    createLayer(cache, 0);
    createLayer(cache, 1);
    // 8x8 at nr 8: 8·(1 + 8)·4 = 288 packed bytes, 320 aligned.
    expect(storage.sealed).toEqual([320, 320]);
    cache.finalizeForRuntime();
    cache.flush();
    expect(storage.flushes).toBe(1);
  });

  it('copies fallback, maxFileBytes and evicted from storage stats', () => {
    const cache = new XNNWeightsCache({ storage: new SeamStorage() });
    expect(cache.stats()).toMatchObject({
      fallback: { 'lock-busy': { count: 2, bytes: 128 } },
      maxFileBytes: null,
      evicted: { entries: 1, bytes: 64 },
    });
    expect(new XNNWeightsCache().stats()).not.toHaveProperty('fallback');
  });

  it('skips the zero-fill of a region storage reports zeroed', () => {
    const storage = new SeamStorage();
    storage.zeroed = true;
    // An unknown CPU: nr8kr1sr1, padding rows left as they are.
    const cache = new XNNWeightsCache({ storage, cpuFeatures: null });
    cache.initializeForRuntime(layers(1));
    const op = createLayer(cache, 0);
    // 8x8 nr8: 288 packed bytes in a 320-byte region; the tail past them was not filled.
    const bytes = cache.offsetToAddr(op.offset);
    expect(bytes[300]).toBe(0xff);
  });
});
