import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  type FullyConnectedOptions,
  GEMM_TILINGS,
  XNNWeightsCache,
} from '../src/index.js';
import { randomFloats, referenceMatmul } from './reference.js';

const code = (c: string) => expect.objectContaining({ code: c });

function operator(nc: number, kc: number, seed: number, extra: Partial<FullyConnectedOptions>) {
  const cache = new XNNWeightsCache();
  const kernel = randomFloats(nc * kc, seed);
  const bias = randomFloats(nc, seed + 1);
  const op = createFullyConnectedNcF32({
    cache,
    inputChannels: kc,
    outputChannels: nc,
    kernel,
    bias,
    ...extra,
  });
  cache.initializeForRuntime({ get: () => undefined, names: () => [] });
  cache.finalizeForRuntime();
  return { op, kernel, bias };
}

/** XNNPACK's minmax epilogue on the float64 reference: max(acc, min), then min(acc, max). */
function clampReference(acc: number, min: number, max: number): number {
  return Math.min(Math.max(acc, min), max);
}

describe('outputMin / outputMax (XNNPACK clamping)', () => {
  it('clamps after the bias, matching a clamped reference for random bounds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(...Object.values(GEMM_TILINGS)),
        fc.double({ min: -3, max: 0.5, noNaN: true }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.integer({ min: 1, max: 1e6 }),
        (nc, kc, batch, tiling, lo, width, seed) => {
          const min = Math.fround(lo);
          const max = Math.fround(lo + width);
          const { op, kernel, bias } = operator(nc, kc, seed, {
            tiling,
            outputMin: min,
            outputMax: max,
          });
          expect(op.outputMin).toBe(min);
          expect(op.outputMax).toBe(max);
          const x = randomFloats(batch * kc, seed + 2);
          const y = op.run(x, batch);
          const expected = referenceMatmul(x, batch, kernel, bias, nc, kc);
          for (let i = 0; i < expected.length; i++) {
            const want = clampReference(expected[i] as number, min, max);
            const got = y[i] as number;
            expect(got).toBeGreaterThanOrEqual(min);
            expect(got).toBeLessThanOrEqual(max);
            expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(want)));
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('takes the bounds as float32 and leaves outputs unclamped by default', () => {
    const { op } = operator(3, 3, 1, { outputMin: 0.1, outputMax: 1e40 });
    expect(op.outputMin).toBe(Math.fround(0.1));
    expect(op.outputMax).toBe(Number.POSITIVE_INFINITY);
    const plain = operator(3, 3, 1, {}).op;
    expect(plain.outputMin).toBe(Number.NEGATIVE_INFINITY);
    expect(plain.outputMax).toBe(Number.POSITIVE_INFINITY);
  });

  it('allows min == max (every output equals it), as XNNPACK does', () => {
    const { op } = operator(5, 4, 3, { outputMin: 0.25, outputMax: 0.25 });
    expect([...op.run(randomFloats(8, 4), 2)]).toEqual(new Array(10).fill(0.25));
  });

  it('turns a NaN accumulator into outputMin when clamping, keeps NaN when not', () => {
    const x = new Float32Array([Number.NaN, 1, 1]);
    const clamped = operator(2, 3, 5, { outputMin: -1, outputMax: 1 }).op;
    expect([...clamped.run(x, 1)]).toEqual([-1, -1]);
    const linear = operator(2, 3, 5, {}).op;
    expect(linear.run(x, 1).every(Number.isNaN)).toBe(true);
  });

  it('rejects NaN bounds and min > max with ERR_CACHE_INVALID_OUTPUT_RANGE', () => {
    for (const bounds of [
      { outputMin: Number.NaN },
      { outputMax: Number.NaN },
      { outputMin: 1, outputMax: 0 },
      { outputMin: Number.POSITIVE_INFINITY, outputMax: Number.NEGATIVE_INFINITY },
      { outputMin: '0' as unknown as number },
    ]) {
      expect(() => operator(2, 2, 1, bounds)).toThrowError(code('ERR_CACHE_INVALID_OUTPUT_RANGE'));
    }
  });
});
