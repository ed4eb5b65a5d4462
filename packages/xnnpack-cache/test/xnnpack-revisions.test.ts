import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  DEFAULT_XNNPACK_REVISION,
  fullyConnectedSeed,
  GEMM_TILINGS,
  InMemoryNamedDataMap,
  OPERATOR_TYPE_FULLY_CONNECTED_NC_F32,
  packedSize,
  revisionsFittingEntry,
  tensorView,
  XNNPACK_REVISIONS,
  XNNWeightsCache,
  XNNWeightsCacheManager,
} from '../src/index.js';
import { randomFloats } from './reference.js';

const code = (c: string) => expect.objectContaining({ code: c });

function operatorSeed(cache: XNNWeightsCache, nc: number, kc: number, revision?: '1adaa7c7') {
  cache.initializeForRuntime(
    new InMemoryNamedDataMap([tensorView('w', [nc, kc], randomFloats(nc * kc, 1))]),
  );
  const op = createFullyConnectedNcF32({
    cache,
    inputChannels: kc,
    outputChannels: nc,
    kernel: cache.loadUnpackedData('w'),
    ...(revision === undefined ? {} : { xnnpackRevision: revision }),
  });
  cache.finalizeForRuntime();
  return op.seed;
}

describe('XNNPACK revisions', () => {
  it('knows fully_connected_nc_f32 = 63 at 92a7ad50 (default) and 59 at 1adaa7c7', () => {
    expect(XNNPACK_REVISIONS['92a7ad50'].fullyConnectedNcF32).toBe(63);
    expect(XNNPACK_REVISIONS['1adaa7c7'].fullyConnectedNcF32).toBe(59);
    expect(DEFAULT_XNNPACK_REVISION).toBe('92a7ad50');
    expect(OPERATOR_TYPE_FULLY_CONNECTED_NC_F32).toBe(63);
  });

  it('seeds a 128x128 nr8 operator 55 at 92a7ad50 and 51 at 1adaa7c7', () => {
    // 128 ^ 128 ^ 8 ^ 1 ^ 1 ^ 0 = 8; 8 ^ 63 = 55; 8 ^ 59 = 51. An unknown CPU packs nr8.
    const unknownCpu = { cpuFeatures: null } as const;
    expect(operatorSeed(new XNNWeightsCache(unknownCpu), 128, 128)).toBe(55);
    expect(operatorSeed(new XNNWeightsCache(unknownCpu), 128, 128, '1adaa7c7')).toBe(51);
    const old = new XNNWeightsCache({ xnnpackRevision: '1adaa7c7', ...unknownCpu });
    expect(old.xnnpackRevision).toBe('1adaa7c7');
    expect(operatorSeed(old, 128, 128)).toBe(51);
    expect(
      fullyConnectedSeed({ outputChannels: 128, inputChannels: 128, nr: 8, kr: 1, sr: 1 }),
    ).toBe(55);
  });

  it('rejects unknown revisions with ERR_CACHE_INVALID_ARGUMENT', () => {
    expect(() => new XNNWeightsCache({ xnnpackRevision: 'main' as '92a7ad50' })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    const cache = new XNNWeightsCache();
    expect(() =>
      createFullyConnectedNcF32({
        cache,
        inputChannels: 1,
        outputChannels: 1,
        kernel: new Float32Array(1),
        xnnpackRevision: '64' as '92a7ad50',
      }),
    ).toThrowError(code('ERR_CACHE_INVALID_ARGUMENT'));
  });

  it('the manager hands its revision to every cache it creates', () => {
    const manager = new XNNWeightsCacheManager({ xnnpackRevision: '1adaa7c7' });
    const handle = manager.acquire('');
    expect(handle.cache.xnnpackRevision).toBe('1adaa7c7');
    handle.release();
  });
});

describe('revisionsFittingEntry', () => {
  const aligned = (nc: number, kc: number, t: { nr: number; kr: number; sr: number }) =>
    Math.ceil(packedSize({ nc, kc, ...t }) / 64) * 64;

  it('tells which revision wrote a v2 entry from its seed and size', () => {
    const t = GEMM_TILINGS.nr8kr1sr1;
    const dataSize = aligned(112, 48, t);
    expect(dataSize).toBe(21_952);
    const seed = fullyConnectedSeed({
      outputChannels: 112,
      inputChannels: 48,
      ...t,
      operatorType: 59,
    });
    const fits = revisionsFittingEntry({ seed, dataSize });
    expect(fits).toContainEqual({
      revision: '1adaa7c7',
      operatorType: 59,
      tiling: t,
      extraBytes: 0,
      outputChannels: 112,
      inputChannels: 48,
      transposed: false,
    });
    expect(fits.filter((f) => f.revision === '92a7ad50' && f.outputChannels === 112)).toEqual([]);
  });

  it('always finds the true shape, tiling and revision (property)', () => {
    const tilings = Object.values(GEMM_TILINGS);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.constantFrom(...tilings),
        fc.constantFrom('92a7ad50' as const, '1adaa7c7' as const),
        fc.boolean(),
        (nc, kc, tiling, revision, transposed) => {
          const operatorType = XNNPACK_REVISIONS[revision].fullyConnectedNcF32;
          const seed = fullyConnectedSeed({
            outputChannels: nc,
            inputChannels: kc,
            ...tiling,
            operatorType,
            transposed,
          });
          const fits = revisionsFittingEntry({ seed, dataSize: aligned(nc, kc, tiling) });
          expect(fits).toContainEqual({
            revision,
            operatorType,
            tiling: { ...tiling },
            extraBytes: 0,
            outputChannels: nc,
            inputChannels: kc,
            transposed,
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('handles a 1 GiB entry by enumerating only up to sqrt of its size', () => {
    const t = GEMM_TILINGS.nr16kr4sr1;
    const dataSize = aligned(16_384, 16_384, t);
    const seed = fullyConnectedSeed({ outputChannels: 16_384, inputChannels: 16_384, ...t });
    const fits = revisionsFittingEntry({ seed, dataSize }, { tilings: [t] });
    expect(fits.map((f) => [f.revision, f.outputChannels, f.inputChannels])).toContainEqual([
      '92a7ad50',
      16_384,
      16_384,
    ]);
  });

  it('validates its input with ERR_CACHE_INVALID_ARGUMENT', () => {
    expect(() => revisionsFittingEntry({ seed: -1, dataSize: 64 })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    expect(() => revisionsFittingEntry({ seed: 1, dataSize: 1.5 })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    expect(() =>
      revisionsFittingEntry({ seed: 1, dataSize: 64 }, { tilings: [{ nr: 0, kr: 1, sr: 1 }] }),
    ).toThrowError(code('ERR_CACHE_INVALID_ARGUMENT'));
  });
});
