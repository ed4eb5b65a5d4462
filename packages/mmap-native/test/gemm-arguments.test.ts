// Hostile arguments to the GEMM kernels: typed errors, never a crash or a read or write
// out of bounds, both through gemmF32 and straight into the addon (whose own checks are
// the last line: a crash would take the test worker down).
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

const shape: Shape = { nc: 10, kc: 6, nr: 8, kr: 1, sr: 1, extraBytes: 0 };
const packed = pack(shape, floats(60, 1), floats(10, 2));
const input = floats(2 * 6, 3);

describe('gemmF32 arguments', () => {
  const gemm = kernels();

  it.each([
    [
      'packed as a Float32Array',
      () => gemm.gemmF32(new Float32Array(packed.buffer) as never, shape, input, 2),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'packed as an array',
      () => gemm.gemmF32([...packed] as never, shape, input, 2),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'packed one byte short',
      () => gemm.gemmF32(packed.subarray(0, packed.byteLength - 4), shape, input, 2),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'packed off a 4-byte boundary',
      () => gemm.gemmF32(new Uint8Array(packed.byteLength + 2).subarray(2), shape, input, 2),
      'ERR_INVALID_ARG_VALUE',
    ],
    [
      'input one float short',
      () => gemm.gemmF32(packed, shape, input.subarray(1), 2),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'input as a Float64Array',
      () => gemm.gemmF32(packed, shape, new Float64Array(12) as never, 2),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'output one float short',
      () => gemm.gemmF32(packed, shape, input, 2, { output: new Float32Array(19) }),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'output as an Int32Array',
      () => gemm.gemmF32(packed, shape, input, 2, { output: new Int32Array(20) as never }),
      'ERR_INVALID_ARG_TYPE',
    ],
    ['batch 0', () => gemm.gemmF32(packed, shape, input, 0), 'ERR_OUT_OF_RANGE'],
    ['batch 1.5', () => gemm.gemmF32(packed, shape, input, 1.5), 'ERR_OUT_OF_RANGE'],
    [
      'batch as a string',
      () => gemm.gemmF32(packed, shape, input, '2' as never),
      'ERR_INVALID_ARG_TYPE',
    ],
    ['no layout', () => gemm.gemmF32(packed, undefined as never, input, 2), 'ERR_INVALID_ARG_TYPE'],
    ['nc 0', () => gemm.gemmF32(packed, { ...shape, nc: 0 }, input, 2), 'ERR_OUT_OF_RANGE'],
    [
      'kc NaN',
      () => gemm.gemmF32(packed, { ...shape, kc: Number.NaN }, input, 2),
      'ERR_OUT_OF_RANGE',
    ],
    ['nr 4097', () => gemm.gemmF32(packed, { ...shape, nr: 4097 }, input, 2), 'ERR_OUT_OF_RANGE'],
    ['sr·kr 3', () => gemm.gemmF32(packed, { ...shape, kr: 3 }, input, 2), 'ERR_INVALID_ARG_VALUE'],
    [
      'extraBytes 2',
      () => gemm.gemmF32(packed, { ...shape, extraBytes: 2 }, input, 2),
      'ERR_INVALID_ARG_VALUE',
    ],
    [
      'outputMin NaN',
      () => gemm.gemmF32(packed, shape, input, 2, { outputMin: Number.NaN }),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'outputMax a string',
      () => gemm.gemmF32(packed, shape, input, 2, { outputMax: '1' as never }),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'outputMin > outputMax',
      () => gemm.gemmF32(packed, shape, input, 2, { outputMin: 1, outputMax: 0 }),
      'ERR_OUT_OF_RANGE',
    ],
    ['threads 0', () => gemm.gemmF32(packed, shape, input, 2, { threads: 0 }), 'ERR_OUT_OF_RANGE'],
    [
      'threads 257',
      () => gemm.gemmF32(packed, shape, input, 2, { threads: 257 }),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'an unknown isa',
      () => gemm.gemmF32(packed, shape, input, 2, { isa: 'neon' as never }),
      'ERR_INVALID_ARG_VALUE',
    ],
    [
      'options as a number',
      () => gemm.gemmF32(packed, shape, input, 2, 3 as never),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'an output over the input',
      () =>
        gemm.gemmF32(packed, { ...shape, kc: 10 }, new Float32Array(packed.byteLength), 1, {
          output: new Float32Array(packed.buffer.slice(0)),
        }),
      'ERR_OUT_OF_RANGE',
    ],
  ])('%s', (_, fn, code) => expectArgumentError(fn, code));

  it('refuses an output that overlaps the input or the weights', () => {
    const both = new Float32Array(40);
    const x = both.subarray(0, 12);
    expectArgumentError(
      () => gemm.gemmF32(packed, shape, x, 2, { output: both.subarray(10, 30) }),
      'ERR_INVALID_ARG_VALUE',
    );
    const weights = new Float32Array(packed.byteLength / 4 + 20);
    const bytes = new Uint8Array(weights.buffer, 0, packed.byteLength);
    bytes.set(packed);
    expectArgumentError(
      () =>
        gemm.gemmF32(bytes, shape, input, 2, {
          output: weights.subarray(weights.length - 30, weights.length - 10),
        }),
      'ERR_INVALID_ARG_VALUE',
    );
    expect(gemm.gemmF32(bytes, shape, input, 2, { output: new Float32Array(20) })).toHaveLength(20);
  });

  it('refuses a detached buffer', () => {
    const copy = packed.slice();
    structuredClone(copy.buffer, { transfer: [copy.buffer] });
    expectArgumentError(() => gemm.gemmF32(copy, shape, input, 2), 'ERR_OUT_OF_RANGE');
    const x = input.slice();
    structuredClone(x.buffer, { transfer: [x.buffer] });
    expectArgumentError(() => gemm.gemmF32(packed, shape, x, 2), 'ERR_OUT_OF_RANGE');
  });

  it('refuses an instruction set this CPU does not have', () => {
    const missing = (['avx512f', 'avx2-fma', 'sse2'] as const).filter(
      (isa) => !gemm.isas.includes(isa),
    );
    for (const isa of missing) {
      expectArgumentError(
        () => gemm.gemmF32(packed, shape, input, 2, { isa }),
        'ERR_INVALID_ARG_VALUE',
      );
    }
  });
});

/** The addon's own function, called without gemmF32's checks. */
type RawGemm = (...args: unknown[]) => void;
const raw = (tryLoadAddon() as unknown as { gemmF32: RawGemm }).gemmF32;

describe('the addon checks every argument itself', () => {
  // packed, input, output, batch, nc, kc, nr, kr, sr, extraBytes, min, max, threads, isa
  const good = (): unknown[] => [
    packed,
    input,
    new Float32Array(20),
    2,
    10,
    6,
    8,
    1,
    1,
    0,
    -1,
    1,
    1,
    -1,
  ];

  it('runs with sound arguments', () => {
    const args = good();
    raw(...args);
    const expected = reference(shape, floats(60, 1), floats(10, 2), input, 2, -1, 1);
    expect(firstMismatch(args[2] as Float32Array, expected)).toBe(-1);
  });

  it.each([
    [0, new Float32Array(packed.buffer)],
    [0, packed.subarray(0, packedBytes(shape) - 1)],
    [0, new Uint8Array(packed.byteLength + 1).subarray(1)],
    [1, input.subarray(1)],
    [1, new Float64Array(12)],
    [2, new Float32Array(19)],
    [2, input],
    [3, 3],
    [3, -1],
    [3, 2 ** 31],
    [4, 11],
    [5, 7],
    [6, 0],
    [6, 9],
    [7, 3],
    [8, 4096 * 2],
    [9, 2],
    [9, 4096],
    [10, Number.NaN],
    [10, 2],
    [11, '1'],
    [12, 0],
    [12, 1000],
    [13, 4],
    [13, -2],
    [13, 0.5],
    [3, 2 ** 40],
    [4, 2 ** 31 - 1],
    [5, 2 ** 31 - 1],
  ])('argument %i replaced (case %#)', (index, value) => {
    const args = good();
    args[index] = value;
    const error = errorOf(() => raw(...args));
    expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
    expect(ARGUMENT_ERROR_CODES).toContain(error?.code);
  });

  const anyValue = fc.oneof(
    fc.integer({ min: -4, max: 80 }),
    fc.constantFrom(2 ** 31, 2 ** 53, -0, Number.NaN, Number.POSITIVE_INFINITY, 0.5),
    fc.constantFrom(null, undefined, '1', {}),
    fc.integer({ min: 0, max: 400 }).map((n) => new Float32Array(n)),
    fc.integer({ min: 0, max: 800 }).map((n) => new Uint8Array(n)),
  );

  test.prop([fc.array(fc.tuple(fc.integer({ min: 0, max: 13 }), anyValue), { maxLength: 4 })], {
    numRuns: 300,
  })('any replaced arguments: a typed error or a run within the buffers', (changes) => {
    const args = good();
    for (const [index, value] of changes) args[index] = value;
    try {
      raw(...args);
    } catch (error) {
      expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
      expect(ARGUMENT_ERROR_CODES).toContain((error as { code?: unknown }).code);
    }
  });
});
