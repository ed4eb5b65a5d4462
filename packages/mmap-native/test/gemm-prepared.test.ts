// prepareGemmF32: the same outputs as gemmF32, bit for bit, on every instruction set and
// thread count; its checks (layout and settings once, buffers and batch at every run); and
// the addon's gemmF32Plan / gemmF32Run under hostile arguments, the plan's handle included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { tryLoadAddon } from '../src/backends/posix/addon.js';
import { ARGUMENT_ERROR_CODES } from '../src/index.js';
import {
  firstMismatch,
  floats,
  kernels,
  pack,
  packedBytes,
  reference,
  type Shape,
} from './gemm-reference.js';
import { errorOf, expectArgumentError } from './helpers.js';

describe('prepareGemmF32', () => {
  const gemm = kernels();

  it.each([
    [32, 1, 1],
    [16, 1, 1],
    [8, 1, 1],
    [5, 1, 1],
    [16, 1, 4],
    [2, 4, 1],
  ])('runs as gemmF32 does, bit for bit, with nr %i kr %i sr %i', (nr, kr, sr) => {
    for (const [nc, kc] of [
      [129, 17],
      [17, 129],
      [3, 3],
    ] as const) {
      const shape: Shape = { nc, kc, nr, kr, sr, extraBytes: 8 };
      const packed = pack(shape, floats(nc * kc, nc + kc), floats(nc, 5), Number.NaN);
      for (const isa of gemm.isas) {
        for (const threads of [1, 3]) {
          const settings = { isa, threads, outputMin: -0.5, outputMax: 0.5 };
          const prepared = gemm.prepareGemmF32(shape, settings);
          for (const batch of [1, 8, 9, 17, 64]) {
            const input = floats(batch * kc, batch);
            const once = gemm.gemmF32(packed, shape, input, batch, settings);
            const output = prepared.run(packed, input, batch);
            expect(output).toEqual(once);
            const expected = reference(
              shape,
              floats(nc * kc, nc + kc),
              floats(nc, 5),
              input,
              batch,
              -0.5,
              0.5,
            );
            expect(firstMismatch(output, expected), `${isa} threads ${threads}`).toBe(-1);
          }
        }
      }
    }
  });

  it('runs other weights of the same layout, into the output given', () => {
    const shape: Shape = { nc: 40, kc: 24, nr: 32, kr: 1, sr: 1, extraBytes: 0 };
    const prepared = gemm.prepareGemmF32(shape);
    expect(prepared.layout).toEqual(shape);
    expect(Object.isFrozen(prepared.layout)).toBe(true);
    expect(prepared.packedBytes).toBe(packedBytes(shape));
    const input = floats(3 * 24, 9);
    const output = new Float32Array(3 * 40 + 5).fill(7);
    for (const seed of [1, 2]) {
      const kernel = floats(40 * 24, seed);
      const bias = floats(40, seed + 10);
      // The packed blocks at an offset inside a larger buffer, read in place.
      const packed = pack(shape, kernel, bias);
      const inside = new Uint8Array(packed.byteLength + 16);
      inside.set(packed, 8);
      expect(prepared.run(inside.subarray(8), input, 3, output)).toBe(output);
      const expected = reference(shape, kernel, bias, input, 3);
      expect(firstMismatch(output.subarray(0, 120), expected)).toBe(-1);
      expect([...output.subarray(120)]).toEqual([7, 7, 7, 7, 7]);
    }
  });

  const shape: Shape = { nc: 10, kc: 6, nr: 8, kr: 1, sr: 1, extraBytes: 0 };
  const packed = pack(shape, floats(60, 1), floats(10, 2));
  const input = floats(2 * 6, 3);

  it.each([
    ['no layout', () => gemm.prepareGemmF32(undefined as never), 'ERR_INVALID_ARG_TYPE'],
    ['nc 0', () => gemm.prepareGemmF32({ ...shape, nc: 0 }), 'ERR_OUT_OF_RANGE'],
    ['sr·kr 3', () => gemm.prepareGemmF32({ ...shape, kr: 3 }), 'ERR_INVALID_ARG_VALUE'],
    [
      'extraBytes 2',
      () => gemm.prepareGemmF32({ ...shape, extraBytes: 2 }),
      'ERR_INVALID_ARG_VALUE',
    ],
    [
      'outputMin NaN',
      () => gemm.prepareGemmF32(shape, { outputMin: Number.NaN }),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'outputMin > outputMax',
      () => gemm.prepareGemmF32(shape, { outputMin: 1, outputMax: 0 }),
      'ERR_OUT_OF_RANGE',
    ],
    ['threads 0', () => gemm.prepareGemmF32(shape, { threads: 0 }), 'ERR_OUT_OF_RANGE'],
    [
      'an unknown isa',
      () => gemm.prepareGemmF32(shape, { isa: 'neon' as never }),
      'ERR_INVALID_ARG_VALUE',
    ],
    ['settings as a number', () => gemm.prepareGemmF32(shape, 3 as never), 'ERR_INVALID_ARG_TYPE'],
  ])('refuses %s when prepared', (_, fn, code) => expectArgumentError(fn, code));

  const prepared = gemm.prepareGemmF32(shape);
  const shared = new Float32Array(40);
  it.each([
    [
      'packed as a Float32Array',
      () => prepared.run(new Float32Array(packed.buffer) as never, input, 2),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'packed one byte short',
      () => prepared.run(packed.subarray(0, packed.byteLength - 4), input, 2),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'packed off a 4-byte boundary',
      () => prepared.run(new Uint8Array(packed.byteLength + 2).subarray(2), input, 2),
      'ERR_INVALID_ARG_VALUE',
    ],
    ['input one float short', () => prepared.run(packed, input.subarray(1), 2), 'ERR_OUT_OF_RANGE'],
    [
      'input as a Float64Array',
      () => prepared.run(packed, new Float64Array(12) as never, 2),
      'ERR_INVALID_ARG_TYPE',
    ],
    ['batch 0', () => prepared.run(packed, input, 0), 'ERR_OUT_OF_RANGE'],
    ['batch 1.5', () => prepared.run(packed, input, 1.5), 'ERR_OUT_OF_RANGE'],
    ['batch as a string', () => prepared.run(packed, input, '2' as never), 'ERR_INVALID_ARG_TYPE'],
    [
      'output one float short',
      () => prepared.run(packed, input, 2, new Float32Array(19)),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'output as an Int32Array',
      () => prepared.run(packed, input, 2, new Int32Array(20) as never),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'an output over the input',
      () => prepared.run(packed, shared, 2, shared),
      'ERR_INVALID_ARG_VALUE',
    ],
  ])('refuses %s at a run', (_, fn, code) => expectArgumentError(fn, code));
});

/** The addon's own functions, called without the package's checks. */
interface RawPlanAddon {
  gemmF32Plan(...args: unknown[]): object;
  gemmF32Run(...args: unknown[]): void;
  File: new (path: string, mode: number, permissions: number) => { close(): void };
}

describe('the addon checks a plan and its runs itself', () => {
  const raw = tryLoadAddon() as unknown as RawPlanAddon;
  const shape: Shape = { nc: 10, kc: 6, nr: 8, kr: 1, sr: 1, extraBytes: 0 };
  const packed = pack(shape, floats(60, 1), floats(10, 2));
  const input = floats(2 * 6, 3);
  // nc, kc, nr, kr, sr, extraBytes, min, max, threads, isa
  const goodPlan = (): unknown[] => [10, 6, 8, 1, 1, 0, -1, 1, 1, -1];
  const plan = raw.gemmF32Plan(...goodPlan());
  // plan, packed, input, output, batch
  const goodRun = (): unknown[] => [plan, packed, input, new Float32Array(20), 2];

  it('runs with sound arguments', () => {
    const args = goodRun();
    raw.gemmF32Run(...args);
    const expected = reference(shape, floats(60, 1), floats(10, 2), input, 2, -1, 1);
    expect(firstMismatch(args[3] as Float32Array, expected)).toBe(-1);
  });

  it.each([
    [0, 0],
    [0, Number.NaN],
    [1, 2 ** 31],
    [2, 0],
    [3, 3],
    [4, 4096 * 2],
    [5, 2],
    [6, Number.NaN],
    [7, '1'],
    [6, 2],
    [8, 0],
    [9, 4],
    [9, 0.5],
  ])('refuses plan argument %i replaced (case %#)', (index, value) => {
    const args = goodPlan();
    args[index] = value;
    const error = errorOf(() => raw.gemmF32Plan(...args));
    expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
    expect(ARGUMENT_ERROR_CODES).toContain(error?.code);
  });

  it.each([
    ['a plain object', {}],
    ['undefined', undefined],
    ['a number', 1],
    ['a proxy of a plan', new Proxy(plan, {})],
    ['an object inheriting from a plan', Object.create(plan)],
  ])('refuses %s for a plan', (_, value) => {
    const args = goodRun();
    args[0] = value;
    expectArgumentError(() => raw.gemmF32Run(...args), 'ERR_INVALID_ARG_TYPE');
  });

  it('refuses an object the addon wraps that is not a plan', () => {
    // A native File holds a C++ object too: only the plan's type tag lets one through.
    const dir = mkdtempSync(join(tmpdir(), 'mmap-native-gemm-plan-'));
    try {
      const file = new raw.File(join(dir, 'file'), 2, 0o644);
      const args = goodRun();
      args[0] = file;
      expectArgumentError(() => raw.gemmF32Run(...args), 'ERR_INVALID_ARG_TYPE');
      file.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const anyValue = fc.oneof(
    fc.integer({ min: -4, max: 80 }),
    fc.constantFrom(2 ** 31, 2 ** 53, -0, Number.NaN, Number.POSITIVE_INFINITY, 0.5),
    fc.constantFrom(null, undefined, '1', {}, plan),
    fc.integer({ min: 0, max: 400 }).map((n) => new Float32Array(n)),
    fc.integer({ min: 0, max: 800 }).map((n) => new Uint8Array(n)),
  );

  test.prop([fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), anyValue), { maxLength: 3 })], {
    numRuns: 300,
  })('any replaced run arguments: a typed error or a run within the buffers', (changes) => {
    const args = goodRun();
    for (const [index, value] of changes) args[index] = value;
    try {
      raw.gemmF32Run(...args);
    } catch (error) {
      expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
      expect(ARGUMENT_ERROR_CODES).toContain((error as { code?: unknown }).code);
    }
  });
});
