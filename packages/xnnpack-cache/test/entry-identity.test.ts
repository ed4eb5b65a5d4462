import { beforeEach, describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  GEMM_TILINGS,
  InMemoryNamedDataMap,
  type LookUpKey,
  type NamedDataMap,
  packingStats,
  resetPackingStats,
  type TensorView,
  tensorView,
  type WeightsCacheProvider,
  XNNWeightsCache,
} from '../src/index.js';
import { makeTempDir } from './file-helpers.js';
import { PreloadedStorage } from './helpers.js';
import { randomFloats, referenceMatmul } from './reference.js';

const code = (c: string) => expect.objectContaining({ code: c });
const NAME = 'fc.weightfc.bias';
/** An unknown CPU: nr8kr1sr1 for every shape, so shapes of one XOR share a seed. */
const ONE_TILING = { cpuFeatures: null } as const;

/** The same tensor names over other shapes and values: what a second program may bring. */
function model(nc: number, kc: number, seed: number): InMemoryNamedDataMap {
  return new InMemoryNamedDataMap([
    tensorView('fc.weight', [nc, kc], randomFloats(nc * kc, seed)),
    tensorView('fc.bias', [nc], randomFloats(nc, seed + 1)),
  ]);
}

/** One build of one layer; returns the operator and its output for a fixed input. */
function build(cache: XNNWeightsCache, map: NamedDataMap, nc: number, kc: number) {
  cache.initializeForRuntime(map);
  const kernel = cache.loadUnpackedData('fc.weight');
  const bias = cache.loadUnpackedData('fc.bias');
  const kernelData = kernel.data;
  const biasData = bias.data;
  const op = createFullyConnectedNcF32({
    cache,
    inputChannels: kc,
    outputChannels: nc,
    kernel,
    bias,
  });
  cache.finalizeForRuntime();
  return { op, kernelData, biasData };
}

function expectReference(
  op: FullyConnectedOperator,
  kernel: Float32Array,
  bias: Float32Array,
  nc: number,
  kc: number,
): void {
  const x = randomFloats(3 * kc, 99);
  const y = op.run(x, 3);
  const expected = referenceMatmul(x, 3, kernel, bias, nc, kc);
  for (let i = 0; i < expected.length; i++) {
    expect(Math.abs((y[i] as number) - (expected[i] as number))).toBeLessThan(1e-4);
  }
}

beforeEach(() => resetPackingStats());

describe('a hit requires the full layout and size, not just name and seed', () => {
  it('misses on XOR-colliding shapes [96, 32] and [112, 48] and computes each correctly', () => {
    const cache = new XNNWeightsCache(ONE_TILING);
    const first = build(cache, model(96, 32, 1), 96, 32);
    const second = build(cache, model(112, 48, 2), 112, 48);
    // Same seed: the XOR of the dimensions is 64 for both.
    expect(second.op.seed).toBe(first.op.seed);
    expect(second.op.cacheHit).toBe(false);
    expect(cache.stats().layoutRejects).toBe(1);
    expect(packingStats().calls).toBe(2);
    expectReference(second.op, second.kernelData, second.biasData, 112, 48);
    // The first runtime still reads its own (superseded) pack.
    expectReference(first.op, first.kernelData, first.biasData, 96, 32);
    expect(cache.getPackedDataMeta(NAME)?.layout).toMatchObject({
      outputChannels: 112,
      inputChannels: 48,
    });
  });

  it('misses when the same name is asked for with another layout (tiling of equal seed)', () => {
    // Seeds agree in every case below; only the layout or the size differs.
    const cache = new XNNWeightsCache();
    const map = model(4, 4, 3);
    cache.initializeForRuntime(map);
    const kernel = cache.loadUnpackedData('fc.weight');
    const layout = {
      operatorType: 63,
      outputChannels: 4,
      inputChannels: 4,
      nr: 8,
      kr: 1,
      sr: 1,
      extraBytes: 0,
      flags: 0,
    };
    const k: LookUpKey = {
      seed: 7,
      kernel,
      bias: null,
      fingerprint: 1,
      layout,
      packedSize: 64,
    };
    const buffer = cache.reserveSpace(64) as Uint8Array;
    expect(cache.lookUpOrInsert(k, buffer, 64)).toBe(0);
    expect(cache.lookUp(k)).toBe(0);
    expect(cache.lookUp({ ...k, layout: { ...layout, flags: 1 } })).toBe(-1);
    expect(cache.lookUp({ ...k, layout: { ...layout, kr: 2, sr: 1, nr: 8 } })).toBe(-1);
    expect(cache.lookUp({ ...k, packedSize: 128 })).toBe(-1);
    // A key without layout or size (an older caller) is decided by seed and fingerprint.
    expect(cache.lookUp({ seed: 7, kernel, bias: null, fingerprint: 1 })).toBe(0);
    expect(cache.stats().layoutRejects).toBe(3);
  });

  it('hits a v2-like entry (no layout) of the right size and misses one of a wrong size', () => {
    const nc = 112;
    const kc = 48;
    const probe = build(new XNNWeightsCache(), model(nc, kc, 5), nc, kc);
    const packedBytes = new XNNWeightsCache();
    // Pack once to learn the exact bytes and size XNNPACK would have stored.
    const donor = build(packedBytes, model(nc, kc, 5), nc, kc);
    const bytes = packedBytes.offsetToAddr(donor.op.offset).slice();

    // Right seed, right size, no layout and fingerprint 0 (v2): seed + size decide → hit.
    const good = new XNNWeightsCache({
      storage: new PreloadedStorage([{ name: NAME, bytes, seed: probe.op.seed, fingerprint: 0 }]),
    });
    resetPackingStats();
    const hit = build(good, model(nc, kc, 5), nc, kc);
    expect(hit.op.cacheHit).toBe(true);
    expect(packingStats().calls).toBe(0);
    expectReference(hit.op, hit.kernelData, hit.biasData, nc, kc);

    // Same seed (the colliding [96, 32] shape) but the entry is that shape's size → miss.
    const smallCache = new XNNWeightsCache();
    const small = build(smallCache, model(96, 32, 6), 96, 32);
    const smallBytes = smallCache.offsetToAddr(small.op.offset).slice();
    expect(smallBytes.byteLength).toBe(12_672);
    const bad = new XNNWeightsCache({
      storage: new PreloadedStorage([
        { name: NAME, bytes: smallBytes, seed: probe.op.seed, fingerprint: 0 },
      ]),
    });
    const miss = build(bad, model(nc, kc, 5), nc, kc);
    expect(miss.op.cacheHit).toBe(false);
    expect(bad.stats().layoutRejects).toBe(1);
    expectReference(miss.op, miss.kernelData, miss.biasData, nc, kc);
  });

  it('releases a superseded pack nobody holds at once (bytes accounted by storage)', () => {
    const cache = new XNNWeightsCache();
    const a = build(cache, model(96, 32, 1), 96, 32);
    const heapAfterFirst = cache.stats().heapBytes;
    cache.deletePackedData([NAME]);
    expect(cache.stats().heapBytes).toBe(0);
    // A loaded (fromLoad) entry of the old shape is released when repacked.
    const storage = new PreloadedStorage([
      {
        name: NAME,
        bytes: new Uint8Array(heapAfterFirst),
        seed: a.op.seed,
        fingerprint: 0,
      },
    ]);
    const loaded = new XNNWeightsCache({ storage });
    build(loaded, model(112, 48, 2), 112, 48);
    expect(loaded.stats().entries).toBe(1);
    expect(loaded.stats().heapBytes).toBe(loaded.stats().packedBytes);
    expect(loaded.offsetToAddr(1).byteLength).toBe(loaded.stats().packedBytes);
    expect(() => loaded.offsetToAddr(0)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
  });

  it('keeps a superseded pack while a runtime holds the name, frees it with the last reference', () => {
    const cache = new XNNWeightsCache();
    const first = build(cache, model(96, 32, 1), 96, 32);
    const second = build(cache, model(112, 48, 2), 112, 48);
    expect(cache.getPackedDataMeta(NAME)?.refCount).toBe(2);
    expectReference(first.op, first.kernelData, first.biasData, 96, 32);
    cache.deletePackedData([NAME]);
    expectReference(second.op, second.kernelData, second.biasData, 112, 48);
    cache.deletePackedData([NAME]);
    expect(cache.stats().heapBytes).toBe(0);
    expect(cache.getPackedDataNames()).toEqual([]);
  });

  it('persists the layout of every entry it packed', () => {
    const storage = new PreloadedStorage();
    const cache = new XNNWeightsCache({ storage, ...ONE_TILING });
    build(cache, model(96, 32, 1), 96, 32);
    const [entry] = storage.lastPersisted;
    expect(entry?.layout).toEqual({
      operatorType: 63,
      outputChannels: 96,
      inputChannels: 32,
      nr: 8,
      kr: 1,
      sr: 1,
      extraBytes: 0,
      flags: 0,
    });
    expect(entry?.refCount).toBe(1);
    expect(entry?.lastUsed).toBeGreaterThan(0);
  });
});

describe('the operator never reads past an entry', () => {
  it('fails with ERR_CACHE_ENTRY_TOO_SMALL when a provider hands out a short region', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(model(112, 48, 2));
    const kernel = cache.loadUnpackedData('fc.weight');
    // A provider that trusts name + seed alone, as a naive cache would.
    const short = new Uint8Array(12_800);
    const lying: WeightsCacheProvider = {
      lookUp: () => 0,
      reserveSpace: () => null,
      lookUpOrInsert: () => 0,
      isFinalized: () => true,
      offsetToAddr: () => short,
      deleteCache: () => {},
    };
    expect(() =>
      createFullyConnectedNcF32({ cache: lying, inputChannels: 48, outputChannels: 112, kernel }),
    ).toThrowError(code('ERR_CACHE_ENTRY_TOO_SMALL'));
  });

  it('checks again at run when the cache hands out another region', () => {
    let region = new Uint8Array(8 * 5 * 4 + 64);
    const provider: WeightsCacheProvider = {
      lookUp: () => 0,
      reserveSpace: () => null,
      lookUpOrInsert: () => 0,
      isFinalized: () => true,
      offsetToAddr: () => region,
      deleteCache: () => {},
    };
    const op = createFullyConnectedNcF32({
      cache: provider,
      inputChannels: 4,
      outputChannels: 4,
      kernel: new Float32Array(16),
      tiling: GEMM_TILINGS.nr8kr1sr1,
    });
    expect(op.run(new Float32Array(4), 1)).toHaveLength(4);
    region = new Uint8Array(16);
    expect(() => op.run(new Float32Array(4), 1)).toThrowError(code('ERR_CACHE_ENTRY_TOO_SMALL'));
  });
});

describe('unpacked data', () => {
  /** A map whose views count data reads and releases, like the module loader's lazy views. */
  function countingMap(nc: number, kc: number) {
    const inner = model(nc, kc, 8);
    const counts = { reads: 0, released: [] as string[] };
    const views = new Map<string, TensorView>();
    for (const name of inner.names()) {
      const view = inner.get(name) as TensorView;
      views.set(name, {
        name,
        dtype: 'f32',
        shape: view.shape,
        get data() {
          counts.reads++;
          return view.data;
        },
      });
    }
    const map: NamedDataMap = {
      get: (name) => views.get(name),
      names: () => views.keys(),
      release: (view) => counts.released.push(view.name),
    };
    return { map, counts };
  }

  function create(cache: XNNWeightsCache, map: NamedDataMap) {
    cache.initializeForRuntime(map);
    return createFullyConnectedNcF32({
      cache,
      inputChannels: 16,
      outputChannels: 8,
      kernel: cache.loadUnpackedData('fc.weight'),
      bias: cache.loadUnpackedData('fc.bias'),
    });
  }

  it('releases kernel and bias as soon as the operator exists, once each', () => {
    const cache = new XNNWeightsCache();
    const { map, counts } = countingMap(8, 16);
    create(cache, map);
    expect(counts.released).toEqual(['fc.weight', 'fc.bias']);
    cache.finalizeForRuntime();
    expect(counts.released).toEqual(['fc.weight', 'fc.bias']);
  });

  it('never reads view.data on a hit', () => {
    const cache = new XNNWeightsCache();
    const cold = countingMap(8, 16);
    create(cache, cold.map);
    cache.finalizeForRuntime();
    expect(cold.counts.reads).toBeGreaterThan(0);
    const warm = countingMap(8, 16);
    const op = create(cache, warm.map);
    cache.finalizeForRuntime();
    expect(op.cacheHit).toBe(true);
    expect(warm.counts.reads).toBe(0);
    expect(warm.counts.released).toEqual(['fc.weight', 'fc.bias']);
  });
});

describe('identity through a real cache file', () => {
  it('same names, colliding shape: miss and repack; the layout survives a reload', () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const path = `${dir}/model.xpwc`;
      const first = new XNNWeightsCache({ path, ...ONE_TILING });
      build(first, model(96, 32, 1), 96, 32);
      first.close();

      resetPackingStats();
      const second = new XNNWeightsCache({ path, ...ONE_TILING });
      const b = build(second, model(112, 48, 2), 112, 48);
      expect(b.op.cacheHit).toBe(false);
      expect(second.stats().layoutRejects).toBe(1);
      expectReference(b.op, b.kernelData, b.biasData, 112, 48);
      second.flush();
      second.close();

      resetPackingStats();
      const third = new XNNWeightsCache({ path, ...ONE_TILING });
      const c = build(third, model(112, 48, 2), 112, 48);
      expect(c.op.cacheHit).toBe(true);
      expect(packingStats().calls).toBe(0);
      expect(third.getPackedDataMeta(NAME)?.layout).toMatchObject({
        outputChannels: 112,
        inputChannels: 48,
        operatorType: 63,
      });
      expectReference(c.op, c.kernelData, c.biasData, 112, 48);
      third.close();
    } finally {
      cleanup();
    }
  });
});
