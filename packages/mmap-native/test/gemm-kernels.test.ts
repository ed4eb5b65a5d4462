// The addon's GEMM kernels against a float64 oracle, on every instruction set this CPU
// has: tilings of XNNPACK's x86 and arm64 configs and odd ones, odd shapes, batches that
// leave every remainder of a register tile, extra bytes, threads, the clamp rules.
import { readFileSync } from 'node:fs';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { type GemmIsa, x86Cpu } from '../src/index.js';
import { firstMismatch, floats, kernels, pack, reference, type Shape } from './gemm-reference.js';

/** [nr, kr, sr]: XNNPACK's x86 and arm64 tilings (GEMM_TILINGS), and nr that fit no vector. */
const TILINGS: readonly (readonly [number, number, number])[] = [
  [8, 1, 1],
  [16, 1, 1],
  [32, 1, 1],
  [16, 1, 4],
  [2, 1, 1],
  [2, 4, 1],
  [4, 2, 2],
  [16, 4, 1],
  [8, 1, 4],
  [4, 1, 1],
  [1, 1, 1],
  [5, 1, 1],
  [12, 1, 1],
  [24, 1, 1],
  [48, 1, 1],
  [64, 1, 1],
  [4, 1, 2],
  [8, 2, 1],
];
const SIZES = [1, 3, 17, 129];
// Every remainder of the SSE2 (4), AVX2 (6) and AVX-512 (8) tiles, a one-row tile after a
// full one (9), and two and three tiles sharing the prefetch of the next block (16, 17).
const BATCHES = [1, 2, 3, 6, 7, 8, 9, 15, 16, 17];

describe('gemmF32', () => {
  const gemm = kernels();

  it('reports the instruction sets of this CPU, widest first', () => {
    expect(gemm.isa).toBe(gemm.isas[0]);
    expect(gemm.isas[gemm.isas.length - 1]).toBe('portable');
    if (process.arch === 'x64') {
      // The dispatch agrees with the CPU flags the kernel reports (and the OS enables).
      const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '';
      const has = (flag: string) => flags.split(' ').includes(flag);
      const expected: GemmIsa[] = [];
      if (has('avx512f')) expected.push('avx512f');
      if (has('avx2') && has('fma')) expected.push('avx2-fma');
      expected.push('sse2', 'portable');
      expect(gemm.isas).toEqual(expected);
    } else if (process.arch === 'arm64') {
      expect(gemm.isas).toEqual(['neon', 'portable']);
    } else {
      expect(gemm.isas).toEqual(['portable']);
    }
  });

  it('reads the x86-64 CPU with CPUID as /proc/cpuinfo shows it', () => {
    const cpu = x86Cpu();
    if (process.arch !== 'x64') {
      expect(cpu).toBeNull();
      return;
    }
    if (process.platform !== 'linux') {
      expect(cpu?.sse2).toBe(true); // part of x86-64
      return;
    }
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (key: string) => new RegExp(`^${key}\\s*:(.*)$`, 'm').exec(text)?.[1]?.trim();
    const flags = (field('flags') ?? '').split(' ');
    expect(cpu).toEqual({
      sse2: flags.includes('sse2'),
      avx: flags.includes('avx'),
      fma3: flags.includes('fma'),
      avx512f: flags.includes('avx512f'),
      vendor: field('vendor_id'),
      family: Number(field('cpu family')),
      model: Number(field('model')),
    });
  });

  it.each(TILINGS)(
    'matches the oracle with nr %i kr %i sr %i on every instruction set',
    (nr, kr, sr) => {
      for (const nc of SIZES) {
        for (const kc of SIZES) {
          for (const extraBytes of [0, 12]) {
            const shape: Shape = { nc, kc, nr, kr, sr, extraBytes };
            const kernel = floats(nc * kc, nc * 131 + kc);
            const bias = floats(nc, nc + 7);
            // Padding rows and extra bytes hold NaN: reading them into an output would show.
            const packed = pack(shape, kernel, bias, Number.NaN);
            for (const batch of BATCHES) {
              const input = floats(batch * kc, batch + kc);
              const expected = reference(shape, kernel, bias, input, batch);
              for (const isa of gemm.isas) {
                const output = gemm.gemmF32(packed, shape, input, batch, { isa });
                const at = firstMismatch(output, expected);
                if (at !== -1) {
                  expect.fail(
                    `${isa} nc ${nc} kc ${kc} batch ${batch} extraBytes ${extraBytes}: output ` +
                      `${at} is ${output[at]}, expected ${expected[at]}`,
                  );
                }
              }
            }
          }
        }
      }
    },
  );

  it('gives the same outputs with 1, 2 and 3 threads, batch 1 to 70', () => {
    for (const [nc, kc, nr] of [
      [129, 257, 32],
      [300, 200, 16],
      [64, 512, 8],
    ] as const) {
      const shape: Shape = { nc, kc, nr, kr: 1, sr: 1, extraBytes: 0 };
      const kernel = floats(nc * kc, 3);
      const bias = floats(nc, 4);
      const packed = pack(shape, kernel, bias, Number.NaN);
      for (const batch of [1, 5, 13, 64, 70]) {
        const input = floats(batch * kc, batch);
        const expected = reference(shape, kernel, bias, input, batch, -0.75, 0.75);
        for (const isa of gemm.isas) {
          const single = gemm.gemmF32(packed, shape, input, batch, {
            isa,
            outputMin: -0.75,
            outputMax: 0.75,
          });
          expect(firstMismatch(single, expected)).toBe(-1);
          for (const threads of [2, 3]) {
            const split = gemm.gemmF32(packed, shape, input, batch, {
              isa,
              threads,
              outputMin: -0.75,
              outputMax: 0.75,
            });
            // Each output is summed by one thread in one order: splitting changes no bit.
            expect(split).toEqual(single);
          }
        }
      }
    }
  });

  it('writes into the output given, and only its first batch·nc floats', () => {
    const shape: Shape = { nc: 17, kc: 9, nr: 16, kr: 1, sr: 1, extraBytes: 0 };
    const kernel = floats(17 * 9, 1);
    const bias = floats(17, 2);
    const input = floats(3 * 9, 3);
    const packed = pack(shape, kernel, bias);
    for (const isa of gemm.isas) {
      const output = new Float32Array(3 * 17 + 5).fill(42);
      expect(gemm.gemmF32(packed, shape, input, 3, { output, isa })).toBe(output);
      expect(firstMismatch(output.subarray(0, 51), reference(shape, kernel, bias, input, 3))).toBe(
        -1,
      );
      expect([...output.subarray(51)]).toEqual([42, 42, 42, 42, 42]);
      // A view that starts inside a larger buffer, packed weights given as an ArrayBuffer.
      const view = new Float32Array(new ArrayBuffer(4 * 80), 12, 51);
      const copy = new Uint8Array(packed.byteLength);
      copy.set(packed);
      gemm.gemmF32(copy.buffer, shape, input, 3, { output: view, isa });
      expect(view).toEqual(output.subarray(0, 51));
    }
  });

  it('reads packed weights at an offset inside a larger buffer, in place', () => {
    const shape: Shape = { nc: 40, kc: 33, nr: 32, kr: 1, sr: 1, extraBytes: 0 };
    const kernel = floats(40 * 33, 5);
    const bias = floats(40, 6);
    const packed = pack(shape, kernel, bias);
    const big = new Uint8Array(packed.byteLength + 4096 + 64).fill(0xff);
    big.set(packed, 4096);
    const view = big.subarray(4096, 4096 + packed.byteLength);
    const input = floats(4 * 33, 7);
    const expected = reference(shape, kernel, bias, input, 4);
    for (const isa of gemm.isas) {
      expect(firstMismatch(gemm.gemmF32(view, shape, input, 4, { isa }), expected)).toBe(-1);
    }
    // In place: a change to the buffer is seen by the next call.
    new Float32Array(big.buffer, 4096, 1)[0] = 1000;
    expect(gemm.gemmF32(view, shape, input, 1)[0]).toBeCloseTo(
      (expected[0] as number) + 1000 - (bias[0] as number),
      3,
    );
  });
});

describe('gemmF32 clamping', () => {
  const gemm = kernels();
  // kc = 1, weight 1, input 1: each output is its bias plus 1·x exactly (x chosen per case).
  const special = [Number.NaN, -0, 0, -1, 1, 0.5, -3, Number.POSITIVE_INFINITY];

  function run(isa: GemmIsa, nr: number, x: number, min?: number, max?: number): Float32Array {
    const nc = special.length;
    const shape: Shape = { nc, kc: 1, nr, kr: 1, sr: 1, extraBytes: 0 };
    // Weights 0 and input -1: every product is -0, so a -0 bias gives -0 (and +0 gives +0).
    const packed = pack(shape, new Float32Array(nc), Float32Array.from(special));
    return gemm.gemmF32(packed, shape, Float32Array.of(x), 1, {
      isa,
      outputMin: min,
      outputMax: max,
    });
  }

  const expectedFor = (min: number, max: number, clamp: boolean) =>
    special.map((b) => {
      const v = Object.is(b, 0) ? 0 : b; // +0 + -0 = +0; -0 + -0 = -0; others unchanged
      if (!clamp) return v;
      if (!(v >= min)) return min;
      if (v > max) return max;
      return v; // not Math.min: a v equal to max keeps its own sign of zero
    });

  it.each([
    [undefined, undefined],
    [0, undefined],
    [-0, 0],
    [0, -0],
    [-0, -0],
    [undefined, 0.5],
    [-1, 1],
    [0.5, 0.5],
    [Number.NEGATIVE_INFINITY, 3],
    [-2, Number.POSITIVE_INFINITY],
  ])(
    'min %s max %s: NaN becomes min, equal bounds keep the sign of zero (clampOutputs)',
    (min, max) => {
      const lo = min ?? Number.NEGATIVE_INFINITY;
      const hi = max ?? Number.POSITIVE_INFINITY;
      if (lo > hi) return;
      const clamp = lo !== Number.NEGATIVE_INFINITY || hi !== Number.POSITIVE_INFINITY;
      const expected = expectedFor(Math.fround(lo), Math.fround(hi), clamp);
      for (const isa of gemm.isas) {
        for (const nr of [1, 4, 8, 16, 32]) {
          const output = [...run(isa, nr, -1, min, max)];
          // Object.is: -0 and +0 differ, NaN equals NaN.
          expect(output.map((v, i) => Object.is(v, expected[i]))).toEqual(expected.map(() => true));
        }
      }
    },
  );

  it('takes the bounds as float32', () => {
    for (const isa of gemm.isas) {
      const output = run(isa, 8, -1, 0.1, 0.30000001);
      expect(output[3]).toBe(Math.fround(0.1));
      expect(output[7]).toBe(Math.fround(0.30000001));
    }
  });
});

describe('gemmF32 property', () => {
  const gemm = kernels();
  const tiling = fc.constantFrom(...TILINGS);

  // About 200 small problems, each on every instruction set: well under a second here.
  test.prop(
    [
      tiling,
      fc.integer({ min: 1, max: 70 }),
      fc.integer({ min: 1, max: 70 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 1, max: 3 }),
      fc.option(
        fc.tuple(
          fc.float({ min: -1, max: 0, noNaN: true }),
          fc.float({ min: 0, max: 1, noNaN: true }),
        ),
      ),
      fc.integer(),
    ],
    { numRuns: 200 },
  )(
    'matches the oracle for any shape, tiling, batch and clamp',
    ([nr, kr, sr], nc, kc, batch, extraWords, threads, range, seed) => {
      const shape: Shape = { nc, kc, nr, kr, sr, extraBytes: extraWords * 4 };
      const kernel = floats(nc * kc, seed);
      const bias = floats(nc, seed + 1);
      const packed = pack(shape, kernel, bias, Number.NaN);
      const input = floats(batch * kc, seed + 2);
      const [min, max] = range ?? [undefined, undefined];
      const expected = reference(shape, kernel, bias, input, batch, min, max);
      for (const isa of gemm.isas) {
        const output = gemm.gemmF32(packed, shape, input, batch, {
          isa,
          threads,
          outputMin: min,
          outputMax: max,
        });
        expect(firstMismatch(output, expected)).toBe(-1);
      }
    },
  );
});
