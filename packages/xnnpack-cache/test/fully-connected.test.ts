import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  fullyConnectedSeed,
  GEMM_TILINGS,
  type GemmTiling,
  HeapStorage,
  InMemoryNamedDataMap,
  PACK_F32_GEMM_GOI_W_FINGERPRINT,
  packedSize,
  packF32GemmGoiW,
  packingStats,
  resetPackingStats,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { PreloadedStorage } from './helpers.js';
import { randomFloats, referenceMatmul } from './reference.js';

const TILINGS: GemmTiling[] = [
  GEMM_TILINGS.nr8kr1sr1,
  GEMM_TILINGS.nr4kr2sr2,
  GEMM_TILINGS.nr16kr4sr1,
  GEMM_TILINGS.nr8kr1sr4,
  { nr: 2, kr: 2, sr: 2 },
  { nr: 3, kr: 8, sr: 1 },
];

function expectClose(actual: Float32Array, expected: Float64Array): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as number;
    expect(Math.abs((actual[i] as number) - e)).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(e)));
  }
}

function modelMap(nc: number, kc: number, seed: number): InMemoryNamedDataMap {
  return new InMemoryNamedDataMap([
    tensorView('fc.weight', [nc, kc], randomFloats(nc * kc, seed)),
    tensorView('fc.bias', [nc], randomFloats(nc, seed + 7)),
  ]);
}

const code = (c: string) => expect.objectContaining({ code: c });

beforeEach(() => resetPackingStats());

describe('fully-connected operator', () => {
  it('equals a reference matmul for random shapes, tilings, with and without bias, both kernels', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...TILINGS),
        fc.boolean(),
        fc.integer({ min: 1, max: 1e6 }),
        fc.constantFrom('native' as const, 'javascript' as const),
        (nc, kc, batch, tiling, withBias, seed, kernels) => {
          const map = modelMap(nc, kc, seed);
          const cache = new XNNWeightsCache();
          cache.initializeForRuntime(map);
          const kernel = cache.loadUnpackedData('fc.weight');
          const bias = withBias ? cache.loadUnpackedData('fc.bias') : null;
          const op = createFullyConnectedNcF32({
            cache,
            inputChannels: kc,
            outputChannels: nc,
            kernel,
            bias,
            tiling,
            kernels,
          });
          cache.finalizeForRuntime();
          const x = randomFloats(batch * kc, seed + 3);
          const expected = referenceMatmul(x, batch, kernel.data, bias?.data ?? null, nc, kc);
          expectClose(op.run(x, batch), expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('follows XNNPACK order: lookUp, reserveSpace, lookUpOrInsert', () => {
    const calls: string[] = [];
    const cache = new XNNWeightsCache();
    type Key = Parameters<typeof cache.lookUp>[0];
    const spy = {
      lookUp(k: Key) {
        calls.push('lookUp');
        return cache.lookUp(k);
      },
      reserveSpace(n: number) {
        calls.push(`reserveSpace(${n})`);
        const buffer = cache.reserveSpace(n);
        // Dirty the buffer: the operator must zero-fill it before packing.
        buffer?.fill(0xff);
        return buffer;
      },
      lookUpOrInsert(k: Key, p: Uint8Array | null, s: number) {
        calls.push(`lookUpOrInsert(${s})`);
        return cache.lookUpOrInsert(k, p, s);
      },
      isFinalized: () => cache.isFinalized(),
      offsetToAddr(o: number) {
        calls.push('offsetToAddr');
        return cache.offsetToAddr(o);
      },
      deleteCache: () => cache.deleteCache(),
    };
    cache.initializeForRuntime(modelMap(3, 5, 1));
    const kernel = cache.loadUnpackedData('fc.weight');
    const op = createFullyConnectedNcF32({
      cache: spy,
      inputChannels: 5,
      outputChannels: 3,
      kernel,
      tiling: { nr: 2, kr: 2, sr: 2 },
    });
    // 36 floats = 144 bytes, rounded up to 64-byte alignment = 192.
    expect(calls).toEqual(['lookUp', 'reserveSpace(192)', 'lookUpOrInsert(192)']);
    cache.finalizeForRuntime();
    const x = randomFloats(5, 9);
    expectClose(op.run(x, 1), referenceMatmul(x, 1, kernel.data, null, 3, 5));
    op.run(x, 1);
    expect(calls.filter((c) => c === 'offsetToAddr')).toHaveLength(2);
    // The padding of the 192-byte buffer is zero, not the 0xff it was dirtied with.
    expect([...cache.offsetToAddr(op.offset).subarray(144)].every((b) => b === 0)).toBe(true);
  });

  it('hits in a second runtime on the same cache with zero packing calls', () => {
    const cache = new XNNWeightsCache();
    const nc = 33;
    const kc = 20;
    const build = () => {
      cache.initializeForRuntime(modelMap(nc, kc, 5));
      const kernel = cache.loadUnpackedData('fc.weight');
      const bias = cache.loadUnpackedData('fc.bias');
      const op = createFullyConnectedNcF32({
        cache,
        inputChannels: kc,
        outputChannels: nc,
        kernel,
        bias,
      });
      const names = cache.finalizeForRuntime();
      return { op, names, kernel: kernel.data, bias: bias.data };
    };
    const first = build();
    expect(first.op.cacheHit).toBe(false);
    expect(packingStats().calls).toBe(1);
    resetPackingStats();
    const second = build();
    expect(second.op.cacheHit).toBe(true);
    expect(packingStats().calls).toBe(0);
    expect(second.op.offset).toBe(first.op.offset);
    expect(second.names).toEqual(['fc.weightfc.bias']);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
    expect(cache.getPackedDataMeta('fc.weightfc.bias')?.refCount).toBe(2);
    const x = randomFloats(3 * kc, 17);
    const expected = referenceMatmul(x, 3, first.kernel, first.bias, nc, kc);
    expectClose(first.op.run(x, 3), expected);
    expectClose(second.op.run(x, 3), expected);
  });

  it('repacks when the tiling (hence the seed) changes', () => {
    const cache = new XNNWeightsCache();
    for (const tiling of [GEMM_TILINGS.nr8kr1sr1, GEMM_TILINGS.nr4kr2sr2]) {
      cache.initializeForRuntime(modelMap(10, 10, 3));
      const kernel = cache.loadUnpackedData('fc.weight');
      const op = createFullyConnectedNcF32({
        cache,
        inputChannels: 10,
        outputChannels: 10,
        kernel,
        tiling,
      });
      expect(op.cacheHit).toBe(false);
      cache.finalizeForRuntime();
      const x = randomFloats(10, 2);
      expectClose(op.run(x, 1), referenceMatmul(x, 1, kernel.data, null, 10, 10));
    }
    expect(packingStats().calls).toBe(2);
    expect(cache.stats().seedRejects).toBe(1);
  });

  it('runs from entries presented by storage (fromLoad) without packing', () => {
    const nc = 12;
    const kc = 9;
    const map = modelMap(nc, kc, 21);
    const weight = map.get('fc.weight');
    if (weight === undefined) throw new Error('missing weight');
    // Pack once, as an earlier process would have, and present it through the storage seam.
    const tiling = GEMM_TILINGS.nr8kr1sr1;
    const shape = { nc, kc, ...tiling };
    const bytes = new Uint8Array(Math.ceil(packedSize(shape) / 64) * 64);
    packF32GemmGoiW(shape, weight.data, null, bytes);
    const storage = new PreloadedStorage([
      {
        name: 'fc.weight',
        bytes,
        seed: fullyConnectedSeed({ outputChannels: nc, inputChannels: kc, ...tiling }),
        fingerprint: PACK_F32_GEMM_GOI_W_FINGERPRINT,
      },
    ]);
    resetPackingStats();
    const cache = new XNNWeightsCache({ storage });
    cache.initializeForRuntime(map);
    const kernel = cache.loadUnpackedData('fc.weight');
    const op = createFullyConnectedNcF32({
      cache,
      inputChannels: kc,
      outputChannels: nc,
      kernel,
      tiling,
    });
    expect(op.cacheHit).toBe(true);
    expect(packingStats().calls).toBe(0);
    cache.finalizeForRuntime();
    const x = randomFloats(2 * kc, 4);
    expectClose(op.run(x, 2), referenceMatmul(x, 2, weight.data, null, nc, kc));
    expect(cache.getPackedDataMeta('fc.weight')?.fromLoad).toBe(true);
  });

  it('works with unregistered weights (unnamed entry) and packs again for each operator', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(new InMemoryNamedDataMap());
    const w = randomFloats(6, 1);
    const op1 = createFullyConnectedNcF32({
      cache,
      inputChannels: 3,
      outputChannels: 2,
      kernel: w,
    });
    const op2 = createFullyConnectedNcF32({
      cache,
      inputChannels: 3,
      outputChannels: 2,
      kernel: w,
    });
    expect(op1.offset).not.toBe(op2.offset);
    expect(packingStats().calls).toBe(2);
    cache.finalizeForRuntime();
    const x = randomFloats(3, 2);
    expectClose(op2.run(x, 1), referenceMatmul(x, 1, w, null, 2, 3));
  });

  it('fails to run with ERR_CACHE_INVALID_STATE before the cache is finalized', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(modelMap(4, 4, 1));
    const kernel = cache.loadUnpackedData('fc.weight');
    const op = createFullyConnectedNcF32({ cache, inputChannels: 4, outputChannels: 4, kernel });
    expect(() => op.run(new Float32Array(4), 1)).toThrowError(code('ERR_CACHE_INVALID_STATE'));
  });

  it('fails creation with ERR_CACHE_OUT_OF_MEMORY when reserveSpace returns null', () => {
    const cache = new XNNWeightsCache({ storage: new HeapStorage({ maxBytes: 64 }) });
    cache.initializeForRuntime(modelMap(16, 16, 1));
    const kernel = cache.loadUnpackedData('fc.weight');
    expect(() =>
      createFullyConnectedNcF32({ cache, inputChannels: 16, outputChannels: 16, kernel }),
    ).toThrowError(code('ERR_CACHE_OUT_OF_MEMORY'));
    expect(packingStats().calls).toBe(0);
    expect(cache.getPackedDataNames()).toEqual([]);
  });

  it('writes into a caller-provided output and validates sizes', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(modelMap(4, 3, 1));
    const kernel = cache.loadUnpackedData('fc.weight');
    const op = createFullyConnectedNcF32({ cache, inputChannels: 3, outputChannels: 4, kernel });
    cache.finalizeForRuntime();
    const out = new Float32Array(8);
    expect(op.run(randomFloats(6, 1), 2, out)).toBe(out);
    expect(() => op.run(new Float32Array(5), 2)).toThrowError(code('ERR_CACHE_INVALID_ARGUMENT'));
    expect(() =>
      createFullyConnectedNcF32({ cache, inputChannels: 3, outputChannels: 5, kernel }),
    ).toThrowError(code('ERR_CACHE_INVALID_ARGUMENT'));
  });

  it('fails creation with ERR_CACHE_OUT_OF_DATE when the name holds different bytes', () => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(modelMap(4, 4, 1));
    const kernel = cache.loadUnpackedData('fc.weight');
    const tiling = GEMM_TILINGS.nr8kr1sr1;
    // Another writer inserts garbage under the name between this operator's lookUp and insert.
    const racing = {
      lookUp: (k: Parameters<typeof cache.lookUp>[0]) => {
        const offset = cache.lookUp(k);
        // Same size and layout as the operator's pack, other bytes.
        const size = k.packedSize as number;
        const garbage = cache.reserveSpace(size) as Uint8Array;
        garbage.fill(1);
        cache.lookUpOrInsert(k, garbage, size);
        return offset;
      },
      reserveSpace: (n: number) => cache.reserveSpace(n),
      lookUpOrInsert: (k: Parameters<typeof cache.lookUp>[0], p: Uint8Array | null, s: number) =>
        cache.lookUpOrInsert(k, p, s),
      isFinalized: () => cache.isFinalized(),
      offsetToAddr: (o: number) => cache.offsetToAddr(o),
      deleteCache: () => cache.deleteCache(),
    };
    expect(() =>
      createFullyConnectedNcF32({
        cache: racing,
        inputChannels: 4,
        outputChannels: 4,
        kernel,
        tiling,
      }),
    ).toThrowError(code('ERR_CACHE_OUT_OF_DATE'));
  });
});
