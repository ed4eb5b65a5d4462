import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  type GemmTiling,
  InMemoryNamedDataMap,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';

// Layers created one after another reuse the checked setup of the layer before when their
// options are the same: these are the cases where they are not.
function layer(options: { tiling?: GemmTiling; outputMin?: number }) {
  const cache = new XNNWeightsCache();
  cache.initializeForRuntime(
    new InMemoryNamedDataMap([tensorView('w', [2, 2], new Float32Array([1, 0, 0, -1]))]),
  );
  const op = createFullyConnectedNcF32({
    cache,
    inputChannels: 2,
    outputChannels: 2,
    kernel: cache.loadUnpackedData('w'),
    ...options,
  });
  cache.finalizeForRuntime();
  return Object.assign(op, { packedBytes: cache.stats().packedBytes });
}

describe('operator setup of consecutive layers', () => {
  it('keeps the sign of a zero output bound from one layer to the next', () => {
    const negativeZero = layer({ outputMin: -0 }).run(new Float32Array([-1, 1]), 1);
    const positiveZero = layer({ outputMin: 0 }).run(new Float32Array([-1, 1]), 1);
    expect(Object.is(negativeZero[0], -0)).toBe(true);
    expect(Object.is(positiveZero[0], 0)).toBe(true);
  });

  it('reads a tiling object that is not frozen again for every layer', () => {
    const tiling = { nr: 8, kr: 1, sr: 1 };
    // 8 channels a block of (1 + 2) floats: 96 bytes, aligned to 128.
    expect(layer({ tiling }).packedBytes).toBe(128);
    tiling.nr = 4;
    const op = layer({ tiling });
    // 4 × 3 floats: 48 bytes, aligned to 64.
    expect(op.packedBytes).toBe(64);
    expect(op.run(new Float32Array([3, 5]), 1)).toEqual(new Float32Array([3, -5]));
  });

  it('checks a layer again after a layer with other options', () => {
    expect(layer({}).inputChannels).toBe(2);
    expect(() => layer({ outputMin: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'ERR_CACHE_INVALID_OUTPUT_RANGE' }),
    );
    expect(() => layer({ outputMin: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'ERR_CACHE_INVALID_OUTPUT_RANGE' }),
    );
  });
});
