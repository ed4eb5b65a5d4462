// prepareGemmChainF32: the bits of running each layer's PreparedGemmF32 in turn, on every
// instruction set, thread count and batch (the scratch grows with it); the checks at
// prepare (layers that chain) and at every run (weights still mapped); and the addon's
// gemmF32Chain / gemmF32ChainRun under hostile arguments.
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { tryLoadAddon } from '../src/backends/posix/addon.js';
import {
  ARGUMENT_ERROR_CODES,
  type GemmChainLayer,
  type GemmF32Settings,
  openMappedFile,
  type PreparedGemmF32,
} from '../src/index.js';
import { floats, kernels, pack, packedBytes, type Shape } from './gemm-reference.js';
import { errorOf, expectArgumentError, makeTempDir } from './helpers.js';

const gemm = kernels();

/** Layers of `widths[i]` → `widths[i + 1]` with the tilings given in turn, packed. */
function layersOf(
  widths: readonly number[],
  tilings: readonly [number, number, number][],
  settings: GemmF32Settings,
): GemmChainLayer[] {
  const layers: GemmChainLayer[] = [];
  for (let i = 0; i + 1 < widths.length; i++) {
    const [nr, kr, sr] = tilings[i % tilings.length] as [number, number, number];
    const shape: Shape = {
      kc: widths[i] as number,
      nc: widths[i + 1] as number,
      nr,
      kr,
      sr,
      extraBytes: i % 2 === 0 ? 0 : 8,
    };
    const packed = pack(shape, floats(shape.nc * shape.kc, i + 1), floats(shape.nc, i + 100));
    // A ReLU fused into every layer but the last, as a model's bounds are.
    const bounds = i + 2 < widths.length ? { outputMin: 0 } : {};
    layers.push({ gemm: gemm.prepareGemmF32(shape, { ...settings, ...bounds }), packed });
  }
  return layers;
}

/** The layers' `run` one after another. */
function layerByLayer(layers: readonly GemmChainLayer[], input: Float32Array, batch: number) {
  let x = input;
  for (const { gemm: layer, packed } of layers) x = layer.run(packed, x, batch);
  return x;
}

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

describe('prepareGemmChainF32', () => {
  const tilings: [number, number, number][] = [
    [32, 1, 1],
    [16, 1, 1],
    [8, 1, 1],
    [16, 1, 4],
    [2, 4, 1],
  ];

  it.each(gemm.isas.flatMap((isa) => [1, 2].map((threads) => [isa, threads] as const)))(
    'runs as its layers do one by one, bit for bit, with %s on %i threads',
    (isa, threads) => {
      const layers = layersOf([33, 128, 128, 17, 128, 5], tilings, { isa, threads });
      const chain = gemm.prepareGemmChainF32(layers);
      expect([chain.layerCount, chain.kc, chain.nc]).toEqual([5, 33, 5]);
      // Batch 1 first, then larger ones (the scratch grows), then smaller ones again.
      for (const batch of [1, 7, 64, 3, 65, 1]) {
        const input = floats(batch * 33, batch);
        const expected = layerByLayer(layers, input, batch);
        expect(bits(chain.run(input, batch)), `batch ${batch}`).toEqual(bits(expected));
      }
    },
  );

  it('runs a single layer, into the output given', () => {
    const layers = layersOf([24, 40], tilings, {});
    const chain = gemm.prepareGemmChainF32(layers);
    const input = floats(3 * 24, 9);
    const output = new Float32Array(3 * 40 + 2).fill(7);
    expect(chain.run(input, 3, output)).toBe(output);
    expect(bits(output.subarray(0, 120))).toEqual(bits(layerByLayer(layers, input, 3)));
    expect([...output.subarray(120)]).toEqual([7, 7]);
  });

  it('reads the weights in place at every run, never a copy', () => {
    const layers = layersOf([8, 16, 8], tilings, {});
    const chain = gemm.prepareGemmChainF32(layers);
    const input = floats(2 * 8, 3);
    expect(bits(chain.run(input, 2))).toEqual(bits(layerByLayer(layers, input, 2)));
    const second = layers[1] as GemmChainLayer;
    const shape: Shape = { nc: 8, kc: 16, nr: 16, kr: 1, sr: 1, extraBytes: 8 };
    (second.packed as Uint8Array).set(pack(shape, floats(128, 50), floats(8, 51)));
    expect(bits(chain.run(input, 2))).toEqual(bits(layerByLayer(layers, input, 2)));
  });

  const shape: Shape = { nc: 10, kc: 6, nr: 8, kr: 1, sr: 1, extraBytes: 0 };
  const packed = pack(shape, floats(60, 1), floats(10, 2));
  const prepared = gemm.prepareGemmF32(shape);
  const next = gemm.prepareGemmF32({ ...shape, nc: 6, kc: 10 });
  const nextPacked = pack({ ...shape, nc: 6, kc: 10 }, floats(60, 3), floats(6, 4));
  const good = (): GemmChainLayer[] => [
    { gemm: prepared, packed },
    { gemm: next, packed: nextPacked },
  ];

  it.each([
    ['no array', () => gemm.prepareGemmChainF32(undefined as never), 'ERR_INVALID_ARG_TYPE'],
    ['no layer', () => gemm.prepareGemmChainF32([]), 'ERR_INVALID_ARG_VALUE'],
    ['a hole', () => gemm.prepareGemmChainF32([undefined as never]), 'ERR_INVALID_ARG_TYPE'],
    [
      'a layer whose kc is not the nc before it',
      () => gemm.prepareGemmChainF32([good()[0] as GemmChainLayer, good()[0] as GemmChainLayer]),
      'ERR_INVALID_ARG_VALUE',
    ],
    [
      'a GEMM prepareGemmF32 did not make',
      () =>
        gemm.prepareGemmChainF32([
          { gemm: { ...prepared } as PreparedGemmF32, packed },
          good()[1] as GemmChainLayer,
        ]),
      'ERR_INVALID_ARG_TYPE',
    ],
    [
      'weights one byte short',
      () =>
        gemm.prepareGemmChainF32([
          good()[0] as GemmChainLayer,
          { gemm: next, packed: nextPacked.subarray(0, nextPacked.byteLength - 4) },
        ]),
      'ERR_OUT_OF_RANGE',
    ],
    [
      'weights as a Float32Array',
      () =>
        gemm.prepareGemmChainF32([
          { gemm: prepared, packed: new Float32Array(packed.buffer) as never },
        ]),
      'ERR_INVALID_ARG_TYPE',
    ],
  ])('refuses %s', (_, fn, code) => expectArgumentError(fn, code));

  it('names the layer that does not chain', () => {
    const error = errorOf(() =>
      gemm.prepareGemmChainF32([good()[0] as GemmChainLayer, good()[0] as GemmChainLayer]),
    );
    expect(error?.message).toContain('layers[1].gemm.layout.kc');
  });

  const chain = gemm.prepareGemmChainF32(good());
  const input = floats(2 * 6, 3);
  it.each([
    ['input one float short', () => chain.run(input.subarray(1), 2), 'ERR_OUT_OF_RANGE'],
    ['batch 0', () => chain.run(input, 0), 'ERR_OUT_OF_RANGE'],
    ['output one float short', () => chain.run(input, 2, new Float32Array(11)), 'ERR_OUT_OF_RANGE'],
    [
      'an output over the input',
      () => {
        const shared = new Float32Array(12);
        return chain.run(shared, 2, shared);
      },
      'ERR_INVALID_ARG_VALUE',
    ],
  ])('refuses %s at a run', (_, fn, code) => expectArgumentError(fn, code));
});

describe('a chain over mapped weights', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('refuses to run once their mapping is closed, and runs on a new one', () => {
    const shapes: Shape[] = [
      { nc: 64, kc: 32, nr: 16, kr: 1, sr: 1, extraBytes: 0 },
      { nc: 8, kc: 64, nr: 8, kr: 1, sr: 1, extraBytes: 0 },
    ];
    const packs = shapes.map((shape, i) =>
      pack(shape, floats(shape.nc * shape.kc, i + 1), floats(shape.nc, i + 7)),
    );
    const file = openMappedFile(join(dir, 'weights.bin'), { mode: 'w+', backend: 'posix' });
    try {
      const second = packedBytes(shapes[0] as Shape);
      file.write(packs[0] as Uint8Array, 0);
      file.write(packs[1] as Uint8Array, second);
      const mapping = file.map();
      const bytes = mapping.bytes();
      const views = [bytes.subarray(0, second), bytes.subarray(second)];
      const layers = shapes.map((shape, i) => ({
        gemm: gemm.prepareGemmF32(shape),
        packed: views[i] as Uint8Array,
      }));
      const chain = gemm.prepareGemmChainF32(layers);
      const input = floats(4 * 32, 5);
      const mapped = chain.run(input, 4);
      const inMemory = layerByLayer(
        shapes.map((shape, i) => ({
          gemm: gemm.prepareGemmF32(shape),
          packed: packs[i] as Uint8Array,
        })),
        input,
        4,
      );
      expect(bits(mapped)).toEqual(bits(inMemory));
      mapping.close();
      const error = errorOf(() => chain.run(input, 4));
      expect(error).toBeInstanceOf(RangeError);
      expect(error?.code).toBe('ERR_OUT_OF_RANGE');
      expect(error?.message).toContain('layer 0');
      // A chain over a new mapping of the same file runs.
      const again = file.map().bytes();
      const remapped = gemm.prepareGemmChainF32(
        layers.map((layer, i) => ({
          gemm: layer.gemm,
          packed: i === 0 ? again.subarray(0, second) : again.subarray(second),
        })),
      );
      expect(bits(remapped.run(input, 4))).toEqual(bits(inMemory));
    } finally {
      file.close();
    }
  });
});

/** The addon's own functions, called without the package's checks. */
interface RawChainAddon {
  gemmF32Plan(...args: unknown[]): object;
  gemmF32Chain(...args: unknown[]): object;
  gemmF32ChainRun(...args: unknown[]): void;
  File: new (path: string, mode: number, permissions: number) => { close(): void };
}

describe('the addon checks a chain and its runs itself', () => {
  const raw = tryLoadAddon() as unknown as RawChainAddon;
  const a = pack(
    { nc: 10, kc: 6, nr: 8, kr: 1, sr: 1, extraBytes: 0 },
    floats(60, 1),
    floats(10, 2),
  );
  const b = pack(
    { nc: 4, kc: 10, nr: 8, kr: 1, sr: 1, extraBytes: 0 },
    floats(40, 3),
    floats(4, 4),
  );
  // nc, kc, nr, kr, sr, extraBytes, min, max, threads, isa
  const planA = raw.gemmF32Plan(10, 6, 8, 1, 1, 0, -1, 1, 1, -1);
  const planB = raw.gemmF32Plan(4, 10, 8, 1, 1, 0, -1, 1, 1, -1);
  const chain = raw.gemmF32Chain([planA, planB], [a, b]);
  const input = floats(2 * 6, 3);
  // chain, input, output, batch
  const goodRun = (): unknown[] => [chain, input, new Float32Array(8), 2];

  it.each([
    ['plans not an array', () => raw.gemmF32Chain(planA, [a])],
    ['no plans', () => raw.gemmF32Chain([], [])],
    ['fewer weights than plans', () => raw.gemmF32Chain([planA, planB], [a])],
    ['a plan that is not one', () => raw.gemmF32Chain([{}], [a])],
    ['plans that do not chain', () => raw.gemmF32Chain([planB, planB], [b, b])],
    ['weights too short', () => raw.gemmF32Chain([planA], [a.subarray(4)])],
    [
      'weights off a 4-byte boundary',
      () => raw.gemmF32Chain([planA], [new Uint8Array(a.length + 2).subarray(2)]),
    ],
  ])('refuses %s', (_, fn) => {
    const error = errorOf(fn);
    expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
    expect(ARGUMENT_ERROR_CODES).toContain(error?.code);
  });

  it.each([
    ['a plain object', {}],
    ['undefined', undefined],
    ['a plan', planA],
    ['a proxy of a chain', new Proxy(chain, {})],
    ['an object inheriting from a chain', Object.create(chain)],
  ])('refuses %s for a chain', (_, value) => {
    const args = goodRun();
    args[0] = value;
    expectArgumentError(() => raw.gemmF32ChainRun(...args), 'ERR_INVALID_ARG_TYPE');
  });

  it('refuses an object the addon wraps that is not a chain', () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const file = new raw.File(join(dir, 'file'), 2, 0o644);
      const args = goodRun();
      args[0] = file;
      expectArgumentError(() => raw.gemmF32ChainRun(...args), 'ERR_INVALID_ARG_TYPE');
      file.close();
    } finally {
      cleanup();
    }
  });

  const anyValue = fc.oneof(
    fc.integer({ min: -4, max: 80 }),
    fc.constantFrom(2 ** 31, 2 ** 53, -0, Number.NaN, Number.POSITIVE_INFINITY, 0.5),
    fc.constantFrom(null, undefined, '1', {}, chain, planA),
    fc.integer({ min: 0, max: 400 }).map((n) => new Float32Array(n)),
    fc.integer({ min: 0, max: 800 }).map((n) => new Uint8Array(n)),
  );

  test.prop([fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), anyValue), { maxLength: 3 })], {
    numRuns: 300,
  })('any replaced run arguments: a typed error or a run within the buffers', (changes) => {
    const args = goodRun();
    for (const [index, value] of changes) args[index] = value;
    try {
      raw.gemmF32ChainRun(...args);
    } catch (error) {
      expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
      expect(ARGUMENT_ERROR_CODES).toContain((error as { code?: unknown }).code);
    }
  });
});
