// The native kernels (@memlayer/mmap-native's addon) against the JavaScript kernel, the
// reference: over every tiling of GEMM_TILINGS and of XNNPACK's x86 configs (with their
// padding rows), extra bytes, odd shapes, batch 1..70, clamps, threads, outputs given or
// not, each instruction set this CPU has, on heap and file-backed caches. The JavaScript
// kernel sums in float64 and the native ones in float32 with FMA, so outputs agree within
// 1e-5 (relative and absolute); the portable native kernel sums as the JavaScript one does
// and agrees bit for bit.
import { loadGemmKernels } from '@memlayer/mmap-native';
import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  GEMM_TILINGS,
  type GemmTiling,
  InMemoryNamedDataMap,
  type KernelChoice,
  tensorView,
  XNNWeightsCache,
  xnnpackGemmTiling,
} from '../src/index.js';
import { operatorExecution } from '../src/operators/kernel-choice.js';
import { makeTempDir } from './file-helpers.js';
import { randomFloats } from './reference.js';

const gemm = loadGemmKernels();

/** GEMM_TILINGS and the tilings XNNPACK picks on x86 (copy-last padding rows included). */
const TILINGS: GemmTiling[] = [
  ...Object.values(GEMM_TILINGS),
  ...[16, 32, 129, 1000].flatMap((nc) => [
    xnnpackGemmTiling(
      { arch: 'x64', sse2: true, avx: true, fma3: true, avx512f: true, zen: false },
      nc,
    ),
    xnnpackGemmTiling(
      { arch: 'x64', sse2: true, avx: true, fma3: true, avx512f: false, zen: false },
      nc,
    ),
    xnnpackGemmTiling(
      { arch: 'x64', sse2: true, avx: false, fma3: false, avx512f: false, zen: false },
      nc,
    ),
  ]),
];

function withinTolerance(actual: Float32Array, expected: Float32Array): number {
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i] as number;
    const e = expected[i] as number;
    if (Number.isNaN(e) ? !Number.isNaN(a) : !(Math.abs(a - e) <= 1e-5 * (1 + Math.abs(e))))
      return i;
  }
  return -1;
}

interface Pair {
  native: FullyConnectedOperator;
  javascript: FullyConnectedOperator;
  cache: XNNWeightsCache;
}

/** The same layer with both kernels: the second creation hits the first one's pack. */
function pair(
  cache: XNNWeightsCache,
  nc: number,
  kc: number,
  tiling: GemmTiling,
  extraBytes: number,
  range: { outputMin?: number; outputMax?: number },
  threads = 1,
): Pair {
  const map = new InMemoryNamedDataMap([
    tensorView('w', [nc, kc], randomFloats(nc * kc, nc * 977 + kc)),
    tensorView('b', [nc], randomFloats(nc, nc + 3)),
  ]);
  cache.initializeForRuntime(map);
  const make = (kernels: KernelChoice) =>
    createFullyConnectedNcF32({
      cache,
      inputChannels: kc,
      outputChannels: nc,
      kernel: cache.loadUnpackedData('w'),
      bias: cache.loadUnpackedData('b'),
      tiling,
      extraBytes,
      kernels,
      threads,
      ...range,
    });
  const native = make('native');
  const javascript = make('javascript');
  cache.finalizeForRuntime();
  return { native, javascript, cache };
}

const name = (t: GemmTiling) =>
  `nr${t.nr}kr${t.kr}sr${t.sr}${t.padding === undefined ? '' : ` ${t.padding}`}`;

describe('native fully-connected kernels', () => {
  it('load here (Linux builds the addon: its absence fails, it is not skipped)', () => {
    expect(gemm).not.toBeNull();
  });

  it.each(TILINGS.map((t) => [name(t), t] as const))(
    '%s: native equals the JavaScript kernel',
    (_, tiling) => {
      for (const [nc, kc] of [
        [1, 1],
        [3, 17],
        [17, 3],
        [129, 129],
        [33, 70],
      ] as const) {
        for (const extraBytes of [0, 8]) {
          for (const range of [{}, { outputMin: -0.5 }, { outputMin: -0.25, outputMax: 0.25 }]) {
            const { native, javascript } = pair(
              new XNNWeightsCache(),
              nc,
              kc,
              tiling,
              extraBytes,
              range,
            );
            expect(native.kernels).toBe('native');
            expect(javascript.kernels).toBe('javascript');
            for (const batch of [1, 2, 5, 8, 13, 70]) {
              const x = randomFloats(batch * kc, batch * 31 + nc);
              const expected = javascript.run(x, batch);
              const at = withinTolerance(native.run(x, batch), expected);
              if (at !== -1)
                expect.fail(`nc ${nc} kc ${kc} extra ${extraBytes} batch ${batch}: output ${at}`);
            }
          }
        }
      }
    },
  );

  it('every instruction set reads the packed entry in place; the portable one sums as the JavaScript kernel', () => {
    if (gemm === null) throw new Error('no native kernels');
    for (const tiling of TILINGS) {
      const { javascript, cache } = pair(new XNNWeightsCache(), 45, 67, tiling, 4, {
        outputMax: 0.5,
      });
      const packed = cache.offsetToAddr(javascript.offset);
      const layout = { nc: 45, kc: 67, nr: tiling.nr, kr: tiling.kr, sr: tiling.sr, extraBytes: 4 };
      for (const batch of [1, 9]) {
        const x = randomFloats(batch * 67, batch);
        const expected = javascript.run(x, batch);
        for (const isa of gemm.isas) {
          const y = gemm.gemmF32(packed, layout, x, batch, { isa, outputMax: 0.5 });
          if (isa === 'portable') expect(y).toEqual(expected);
          else expect(withinTolerance(y, expected), `${name(tiling)} ${isa}`).toBe(-1);
        }
      }
    }
  });

  it('threads 1, 2 and 3 give the same outputs, into an output given or a new one', () => {
    for (const threads of [1, 2, 3]) {
      const { native, javascript } = pair(
        new XNNWeightsCache(),
        300,
        257,
        GEMM_TILINGS.nr32kr1sr1,
        0,
        { outputMin: -1 },
        threads,
      );
      for (const batch of [1, 7, 64]) {
        const x = randomFloats(batch * 257, batch);
        const expected = javascript.run(x, batch);
        const fresh = native.run(x, batch);
        expect(withinTolerance(fresh, expected)).toBe(-1);
        const given = new Float32Array(batch * 300 + 3).fill(9);
        expect(native.run(x, batch, given)).toBe(given);
        expect(given.subarray(0, batch * 300)).toEqual(fresh);
        expect([...given.subarray(batch * 300)]).toEqual([9, 9, 9]);
      }
    }
  });

  it('an output over the input gives what separate buffers give', () => {
    const { native, javascript } = pair(
      new XNNWeightsCache(),
      16,
      16,
      GEMM_TILINGS.nr16kr1sr1,
      0,
      {},
    );
    const x = randomFloats(3 * 16, 5);
    const expected = javascript.run(x, 3);
    const shared = x.slice();
    expect(withinTolerance(native.run(shared, 3, shared), expected)).toBe(-1);
  });

  it('reads the weights in place from a file-backed cache (MAP_SHARED mapping)', () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const cache = new XNNWeightsCache({ path: `${dir}/cache.xnnc` });
      const { native, javascript } = pair(cache, 64, 96, GEMM_TILINGS.nr16kr1sr1, 0, {});
      const x = randomFloats(4 * 96, 9);
      expect(withinTolerance(native.run(x, 4), javascript.run(x, 4))).toBe(-1);
      cache.close();
    } finally {
      cleanup();
    }
  });
});

describe('kernel choice', () => {
  const failing = () => {
    throw new Error('broken build');
  };

  it("'native' without the addon is ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE; 'auto' runs JavaScript", () => {
    expect(() => operatorExecution('native', 1, () => null)).toThrowError(
      expect.objectContaining({ code: 'ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE' }),
    );
    expect(() => operatorExecution('native', 1, failing)).toThrowError(
      expect.objectContaining({
        code: 'ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE',
        message: expect.stringContaining('broken build'),
      }),
    );
    expect(operatorExecution('auto', 2, () => null)).toEqual({ native: null, threads: 2 });
    expect(operatorExecution(undefined, undefined, failing)).toEqual({ native: null, threads: 1 });
    expect(operatorExecution('javascript', 3, failing)).toEqual({ native: null, threads: 3 });
  });

  it.each([
    [{ kernels: 'wasm' }],
    [{ kernels: 1 }],
    [{ threads: 0 }],
    [{ threads: 1.5 }],
    [{ threads: 257 }],
    [{ threads: '2' }],
  ])('%o is ERR_CACHE_INVALID_ARGUMENT', (options) => {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(
      new InMemoryNamedDataMap([tensorView('w', [2, 2], new Float32Array(4))]),
    );
    expect(() =>
      createFullyConnectedNcF32({
        cache,
        inputChannels: 2,
        outputChannels: 2,
        kernel: cache.loadUnpackedData('w'),
        ...(options as object),
      }),
    ).toThrowError(expect.objectContaining({ code: 'ERR_CACHE_INVALID_ARGUMENT' }));
  });
});
