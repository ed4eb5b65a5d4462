import { describe, expect, it, vi } from 'vitest';
import {
  createFullyConnectedNcF32,
  createFullyConnectedNcF32ByName,
  createMissedFullyConnectedNcF32ByName,
  findFullyConnectedNcF32ByEntryName,
  findFullyConnectedNcF32ByName,
  fullyConnectedNcF32At,
  GEMM_TILINGS,
  InMemoryNamedDataMap,
  type NamedDataMap,
  type NamedWeightsCacheProvider,
  NOT_FOUND,
  packingStats,
  resetPackingStats,
  type TensorView,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { operatorSetup } from '../src/operators/operator-setup.js';
import { randomFloats, referenceMatmul } from './reference.js';

const NC = 12;
const KC = 20;

/** A named data map that counts the tensors it hands out. */
class CountingMap implements NamedDataMap {
  loads = 0;
  readonly #inner: InMemoryNamedDataMap;

  constructor(seed: number) {
    this.#inner = new InMemoryNamedDataMap([
      tensorView('fc.weight', [NC, KC], randomFloats(NC * KC, seed)),
      tensorView('fc.bias', [NC], randomFloats(NC, seed + 1)),
    ]);
  }

  get(name: string): TensorView | undefined {
    this.loads++;
    return this.#inner.get(name);
  }

  names(): Iterable<string> {
    return this.#inner.names();
  }
}

function byName(cache: NamedWeightsCacheProvider, outputChannels = NC) {
  return createFullyConnectedNcF32ByName({
    cache,
    inputChannels: KC,
    outputChannels,
    kernel: 'fc.weight',
    bias: 'fc.bias',
  });
}

const code = (c: string) => expect.objectContaining({ code: c });

/** A cache whose last build packed the layer, in a new build: what a warm start sees. */
function cacheHoldingTheLayer(seed: number): { map: CountingMap; cache: XNNWeightsCache } {
  const map = new CountingMap(seed);
  const cache = new XNNWeightsCache();
  cache.initializeForRuntime(map);
  byName(cache);
  cache.finalizeForRuntime();
  cache.initializeForRuntime(map);
  return { map, cache };
}

describe('createFullyConnectedNcF32ByName', () => {
  it('packs on a miss exactly as the view-based call does, counting one miss', () => {
    const map = new CountingMap(3);
    const byNameCache = new XNNWeightsCache();
    byNameCache.initializeForRuntime(map);
    resetPackingStats();
    const op = byName(byNameCache);
    expect(op.cacheHit).toBe(false);
    expect(packingStats().calls).toBe(1);
    expect(byNameCache.stats()).toMatchObject({ hits: 0, misses: 1, entries: 1 });
    byNameCache.finalizeForRuntime();

    const viewCache = new XNNWeightsCache();
    viewCache.initializeForRuntime(map);
    const reference = createFullyConnectedNcF32({
      cache: viewCache,
      inputChannels: KC,
      outputChannels: NC,
      kernel: viewCache.loadUnpackedData('fc.weight'),
      bias: viewCache.loadUnpackedData('fc.bias'),
    });
    viewCache.finalizeForRuntime();
    expect(byNameCache.offsetToAddr(op.offset)).toEqual(viewCache.offsetToAddr(reference.offset));
    expect(byNameCache.getPackedDataNames()).toEqual(viewCache.getPackedDataNames());
    const x = randomFloats(3 * KC, 9);
    expect(op.run(x, 3)).toEqual(reference.run(x, 3));
  });

  it('hits from the names alone: no tensor is loaded, the entry is referenced', () => {
    const map = new CountingMap(4);
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(map);
    const cold = byName(cache);
    const coldNames = cache.finalizeForRuntime();
    const loadsWhenCold = map.loads;
    expect(loadsWhenCold).toBe(2);

    cache.initializeForRuntime(map);
    resetPackingStats();
    const warm = byName(cache);
    expect(map.loads).toBe(loadsWhenCold);
    expect(warm.cacheHit).toBe(true);
    expect(warm.offset).toBe(cold.offset);
    expect(packingStats().calls).toBe(0);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
    // The hit is used by this runtime: finalize takes a reference on it, as lookUp's hits.
    expect(cache.finalizeForRuntime()).toEqual(coldNames);
    expect(cache.getPackedDataMeta(coldNames[0] as string)?.refCount).toBe(2);

    const view = new InMemoryNamedDataMap([...map.names()].map((n) => map.get(n) as TensorView));
    const kernel = view.get('fc.weight') as TensorView;
    const bias = view.get('fc.bias') as TensorView;
    const x = randomFloats(2 * KC, 5);
    const expected = referenceMatmul(x, 2, kernel.data, bias.data, NC, KC);
    const y = warm.run(x, 2);
    for (let i = 0; i < expected.length; i++) {
      expect(Math.abs((y[i] as number) - (expected[i] as number))).toBeLessThan(1e-4);
    }
  });

  it('never hits an entry of another shape or tiling: it loads and checks the views', () => {
    const { map, cache } = cacheHoldingTheLayer(5);
    const loads = map.loads;
    // Same names, another tiling: a different seed and layout, so a repack.
    const retiled = createFullyConnectedNcF32ByName({
      cache,
      inputChannels: KC,
      outputChannels: NC,
      kernel: 'fc.weight',
      bias: 'fc.bias',
      tiling: GEMM_TILINGS.nr4kr2sr2,
    });
    expect(retiled.cacheHit).toBe(false);
    expect(map.loads).toBe(loads + 2);
    // Same names, a shape the weights do not have: refused once the views are checked.
    expect(() => byName(cache, NC + 1)).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
    cache.abortRuntime();
  });

  it('falls back to views for a provider without lookUpByName', () => {
    const { map, cache } = cacheHoldingTheLayer(6);
    const loads = map.loads;
    const plain: NamedWeightsCacheProvider = {
      lookUp: (key) => cache.lookUp(key),
      reserveSpace: (n) => cache.reserveSpace(n),
      lookUpOrInsert: (key, packed, size) => cache.lookUpOrInsert(key, packed, size),
      isFinalized: () => cache.isFinalized(),
      offsetToAddr: (offset) => cache.offsetToAddr(offset),
      deleteCache: () => cache.deleteCache(),
      loadUnpackedData: (name) => cache.loadUnpackedData(name),
      releaseUnpackedData: (view) => cache.releaseUnpackedData(view),
      // The tiling the layer was packed with: the cache's choice for its CPU.
      gemmTiling: (outputChannels) => cache.gemmTiling(outputChannels),
    };
    const op = byName(plain);
    expect(op.cacheHit).toBe(true);
    expect(map.loads).toBe(loads + 2);
    cache.finalizeForRuntime();
  });

  it('refuses names that are not strings and look-ups after finalize', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(new CountingMap(7));
    const bad = (kernel: unknown, bias: unknown) => () =>
      createFullyConnectedNcF32ByName({
        cache,
        inputChannels: KC,
        outputChannels: NC,
        kernel: kernel as string,
        bias: bias as string,
      });
    expect(bad(42, 'fc.bias')).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
    expect(bad('fc.weight', {})).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
    const shapeKey = { seed: 1, fingerprint: 2 };
    expect(() => cache.lookUpByName('fc.weight', 7 as unknown as string, shapeKey)).toThrow(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    expect(() => cache.lookUpByName('fc.weight', null, { seed: -1, fingerprint: 2 })).toThrow(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    cache.finalizeForRuntime();
    expect(() => cache.lookUpByName('fc.weight', 'fc.bias', shapeKey)).toThrow(
      code('ERR_CACHE_INVALID_STATE'),
    );
  });

  it('checks a shape key again when it can have changed (only a frozen one is checked once)', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(new CountingMap(7));
    const mutable = { seed: 1, fingerprint: 2 };
    expect(cache.lookUpByName('fc.weight', 'fc.bias', mutable)).toBe(NOT_FOUND);
    mutable.seed = -1;
    expect(() => cache.lookUpByName('fc.weight', 'fc.bias', mutable)).toThrow(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    const frozen = Object.freeze({ seed: 3, fingerprint: 4 });
    expect(cache.lookUpByName('fc.weight', 'fc.bias', frozen)).toBe(NOT_FOUND);
    expect(cache.lookUpByName('fc.weight', null, frozen)).toBe(NOT_FOUND);
    // Operators hand the cache their plan's shape key, which is frozen.
    const setup = operatorSetup({ cache, inputChannels: KC, outputChannels: NC });
    expect(Object.isFrozen(setup.plan.shapeKey)).toBe(true);
  });
});

describe('findFullyConnectedNcF32ByName and fullyConnectedNcF32At', () => {
  const options = (cache: NamedWeightsCacheProvider) => ({
    cache,
    inputChannels: KC,
    outputChannels: NC,
    kernel: 'fc.weight',
    bias: 'fc.bias',
  });
  const input = randomFloats(3 * KC, 9);

  it('find a hit without loading a tensor; the operator made later runs as the eager one', () => {
    const { map, cache } = cacheHoldingTheLayer(5);
    const loads = map.loads;
    const before = cache.stats();
    const offset = findFullyConnectedNcF32ByName(options(cache));
    expect(offset).not.toBe(NOT_FOUND);
    expect(map.loads).toBe(loads);
    expect(cache.stats()).toMatchObject({ hits: before.hits + 1, misses: before.misses });
    // The build holds the entry found: finalize references it.
    expect(cache.finalizeForRuntime()).toHaveLength(1);

    const operator = fullyConnectedNcF32At(options(cache), offset);
    expect(operator).toMatchObject({ offset, cacheHit: true, inputChannels: KC });
    const eager = cacheHoldingTheLayer(5);
    const reference = byName(eager.cache);
    eager.cache.finalizeForRuntime();
    expect(operator.run(input, 3)).toEqual(reference.run(input, 3));
  });

  it('find nothing on a miss and count nothing; the operator is then packed from its views', () => {
    const map = new CountingMap(6);
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(map);
    expect(findFullyConnectedNcF32ByName(options(cache))).toBe(NOT_FOUND);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0, entries: 0 });
    expect(map.loads).toBe(0);
    const lookUpByName = vi.spyOn(cache, 'lookUpByName');
    const operator = createMissedFullyConnectedNcF32ByName(options(cache));
    expect(operator.cacheHit).toBe(false);
    // Packed through its views, with no second look-up by name; the miss counted once.
    expect(lookUpByName).not.toHaveBeenCalled();
    expect(map.loads).toBe(2);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 1, entries: 1 });
    cache.finalizeForRuntime();
    const eager = new XNNWeightsCache();
    eager.initializeForRuntime(new CountingMap(6));
    const reference = createFullyConnectedNcF32ByName(options(eager));
    eager.finalizeForRuntime();
    expect(operator.run(input, 3)).toEqual(reference.run(input, 3));
  });

  it('find a pair by its entry name (kernel name + bias name) as by its two names', () => {
    const { map, cache } = cacheHoldingTheLayer(8);
    const loads = map.loads;
    const { kernel, bias, ...settings } = options(cache);
    const byEntry = findFullyConnectedNcF32ByEntryName({ ...settings, entryName: kernel + bias });
    expect(byEntry).not.toBe(NOT_FOUND);
    expect(findFullyConnectedNcF32ByName(options(cache))).toBe(byEntry);
    expect(map.loads).toBe(loads);
    // The kernel's name alone names no entry (the pair's is named by both).
    expect(findFullyConnectedNcF32ByEntryName({ ...settings, entryName: kernel })).toBe(NOT_FOUND);
    expect(() =>
      findFullyConnectedNcF32ByEntryName({ ...settings, entryName: 5 as never }),
    ).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
  });

  it('refuse bad names, a dead offset and an entry smaller than the layer', () => {
    const { cache } = cacheHoldingTheLayer(7);
    expect(() => findFullyConnectedNcF32ByName({ ...options(cache), kernel: 3 as never })).toThrow(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    const offset = findFullyConnectedNcF32ByName(options(cache));
    cache.finalizeForRuntime();
    expect(() => fullyConnectedNcF32At(options(cache), 12345)).toThrow(
      code('ERR_CACHE_INVALID_OFFSET'),
    );
    expect(() =>
      fullyConnectedNcF32At({ ...options(cache), outputChannels: 2 * NC }, offset),
    ).toThrow(code('ERR_CACHE_ENTRY_TOO_SMALL'));
  });
});
