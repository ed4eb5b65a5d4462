import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  BackendRegistry,
  describePteProgram,
  Module,
  ModuleLoaderError,
  PteProgram,
  verifyPteConstants,
  XnnpackBackend,
  type XnnpackDelegateHandle,
} from '../src/index.js';
import { cacheOptions } from './fixtures.js';
import { makeLayers, reference, sha256, writeMlp } from './pte-fixtures.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pte-program-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function codeOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return (error as ModuleLoaderError).code;
  }
  throw new Error('expected a ModuleLoaderError, nothing was thrown');
}

const input = (rows: number, features: number) =>
  Float32Array.from({ length: rows * features }, (_, i) => Math.sin(i + 1));

/**
 * Outputs equal the float64 reference within 1e-5 (relative and absolute): the native
 * kernels sum in float32 with FMA (the JavaScript kernel, in float64, matched it exactly).
 */
function expectNearReference(actual: ArrayLike<number> | undefined, expected: Float32Array): void {
  expect(actual?.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as number;
    expect(Math.abs((actual?.[i] as number) - e)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(e)));
  }
}

function registryWith(manager = new XNNWeightsCacheManager()) {
  return new BackendRegistry().register(new XnnpackBackend({ caches: manager }));
}

describe('ExecuTorch programs (.pte + .ptd)', () => {
  test('runs an MLP whose constants live in a .ptd, equal to the reference at any batch', () => {
    const layers = makeLayers([8, 16, 12, 4]);
    const { pte, ptd } = writeMlp(dir, 'mlp', layers);
    const module = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    expect(module.methodNames()).toEqual(['forward']);
    for (const rows of [1, 3]) {
      const [out] = module.execute('forward', [{ shape: [rows, 8], data: input(rows, 8) }]);
      expect(out?.shape).toEqual([rows, 4]);
      expectNearReference(out?.data, reference(layers, input(rows, 8), rows));
    }
    module.dispose();
  });

  // A line of fully-connected layers runs as one native chain with scratch of its own: these
  // programs put a standalone clamp after each layer, so their nodes run one by one.
  test("intermediate values live in the workspace; outputs are the caller's and outlive later runs", () => {
    const layers = makeLayers([8, 16, 12, 4], 1, 'clamp');
    const { pte, ptd } = writeMlp(dir, 'mlp', layers);
    const module = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    module.loadMethod('forward');
    const [first] = module.execute('forward', [{ shape: [3, 8], data: input(3, 8) }]);
    const kept = Float32Array.from(first?.data ?? []);
    const workspace = (module.methodHandle('forward') as { workspace: { byteLength: number } })
      .workspace;
    // Layer and clamp outputs of 3 rows (16, 16, 12, 12 features), at most two live at a
    // time (16 + 16 at the first clamp); the output is a fresh array.
    expect(workspace.byteLength).toBe(3 * (16 + 16) * 4);
    expect(first?.data.buffer.byteLength).toBe(3 * 4 * 4);
    module.execute('forward', [{ shape: [3, 8], data: input(3, 8).map((x) => -x) }]);
    expect(first?.data).toEqual(kept);
    module.dispose();
  });

  test('a chain of nodes runs through two buffers of the workspace, at any batch, run after run', () => {
    const layers = makeLayers([8, 16, 16, 16, 16, 4], 1, 'clamp');
    const { pte, ptd } = writeMlp(dir, 'chain', layers);
    const module = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    module.loadMethod('forward');
    const workspace = (module.methodHandle('forward') as { workspace: { byteLength: number } })
      .workspace;
    for (const rows of [3, 5, 3, 3]) {
      const [out] = module.execute('forward', [{ shape: [rows, 8], data: input(rows, 8) }]);
      expectNearReference(out?.data, reference(layers, input(rows, 8), rows));
    }
    // Eight intermediates of 16 features, each read by the next node only: two at a time.
    expect(workspace.byteLength).toBe(2 * 5 * 16 * 4);
    module.dispose();
  });

  test('constants in the .pte, in the payload by offset, and a standalone clamp give the same outputs', () => {
    const layers = makeLayers([6, 10, 5], 3);
    let first: number[] | undefined;
    const clampLayers = makeLayers([6, 10, 5], 3, 'clamp');
    for (const [name, program] of [
      ['in-pte', writeMlp(dir, 'in-pte', layers, { constants: 'pte' })],
      ['offset', writeMlp(dir, 'offset', layers, { constants: 'offset' })],
      ['clamp', writeMlp(dir, 'clamp', clampLayers, { constants: 'pte' })],
    ] as const) {
      const module = new Module(program.pte, { registry: registryWith() });
      const [out] = module.execute('forward', [{ shape: [2, 6], data: input(2, 6) }]);
      expectNearReference(out?.data, reference(layers, input(2, 6), 2));
      // The three programs run the same kernels on the same weights: the same bits.
      first ??= [...(out?.data ?? [])];
      expect([...(out?.data ?? [])], name).toEqual(first);
      module.dispose();
    }
  });

  test('XNNGelu is exact GELU, x·Φ(x), as XNNPACK computes it (not the tanh approximation)', () => {
    const layers = makeLayers([6, 5], 11);
    const { pte } = writeMlp(dir, 'gelu', layers, { constants: 'pte', tail: 42 });
    const module = new Module(pte, { registry: registryWith() });
    const [out] = module.execute('forward', [{ shape: [2, 6], data: input(2, 6) }]);
    module.dispose();
    // erf by its Taylor series in f64: an independent reference for |x| < 4.
    const erf = (x: number) => {
      let term = x;
      let sum = x;
      for (let n = 1; n < 80; n++) {
        term *= (-x * x) / n;
        sum += term / (2 * n + 1);
      }
      return (2 / Math.sqrt(Math.PI)) * sum;
    };
    const linear = reference(layers, input(2, 6), 2);
    const expected = [...linear].map((x) => 0.5 * x * (1 + erf(x / Math.SQRT2)));
    expect(out?.data.length).toBe(expected.length);
    for (const [i, value] of [...(out?.data ?? [])].entries()) {
      expect(Math.abs(value - (expected[i] as number))).toBeLessThan(1e-6);
    }
  });

  test('a cold start packs under the program keys (kernel key + bias key); a warm start in a fresh manager packs nothing', () => {
    const layers = makeLayers([8, 16, 4]);
    const { pte, ptd, keys } = writeMlp(dir, 'mlp', layers);
    const cachePath = join(dir, 'weights.xpwc');
    const cold = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    cold.load(cacheOptions(cachePath, true));
    cold.loadMethod('forward');
    const coldHandle = cold.methodHandle('forward') as XnnpackDelegateHandle;
    expect(coldHandle.cacheHits).toBe(0);
    // ExecuTorch's XNNWeightsCache names a layer's entry by its kernel key then its bias key.
    expect(coldHandle.packedDataNames).toEqual([
      (keys[0] as string) + (keys[1] as string),
      (keys[2] as string) + (keys[3] as string),
    ]);
    const [coldOut] = cold.execute('forward', [{ shape: [1, 8], data: input(1, 8) }]);
    cold.dispose();
    const warm = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    warm.load(cacheOptions(cachePath));
    warm.loadMethod('forward');
    expect((warm.methodHandle('forward') as XnnpackDelegateHandle).cacheHits).toBe(2);
    const [warmOut] = warm.execute('forward', [{ shape: [1, 8], data: input(1, 8) }]);
    expect([...(warmOut?.data ?? [])]).toEqual([...(coldOut?.data ?? [])]);
    warm.dispose();
  });

  test('a .pte whose constants are in a .ptd it was not given is ERR_DATA_FILE_REQUIRED; a missing key ERR_NAMED_DATA_MISSING', () => {
    const { pte } = writeMlp(dir, 'mlp', makeLayers([4, 3]));
    expect(codeOf(() => new Module(pte, { registry: registryWith() }).loadMethod('forward'))).toBe(
      'ERR_DATA_FILE_REQUIRED',
    );
    const other = writeMlp(dir, 'other', makeLayers([4, 3], 9));
    expect(
      codeOf(() =>
        new Module(pte, { registry: registryWith(), dataFiles: [other.ptd as string] }).loadMethod(
          'forward',
        ),
      ),
    ).toBe('ERR_NAMED_DATA_MISSING');
  });

  test('constant bytes that do not hash to their key are refused when packed (ERR_CONSTANT_MISMATCH)', () => {
    const { pte, ptd } = writeMlp(dir, 'mlp', makeLayers([4, 3]));
    const bytes = readFileSync(ptd as string);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff; // the last constant's last byte
    writeFileSync(ptd as string, bytes);
    const module = new Module(pte, { registry: registryWith(), dataFiles: [ptd as string] });
    expect(codeOf(() => module.loadMethod('forward'))).toBe('ERR_CONSTANT_MISMATCH');
    const program = new PteProgram(pte, [ptd as string]);
    expect(verifyPteConstants(program).filter((check) => !check.ok)).toHaveLength(1);
    program.close();
  });

  test('one error names every node and kernel that cannot run, before any cache is touched', () => {
    const { pte, ptd } = writeMlp(dir, 'mlp', makeLayers([4, 3]), {
      tail: 3, // XNNSoftmax
      kernel: { name: 'aten::add', overload: 'out' },
    });
    const manager = new XNNWeightsCacheManager();
    const module = new Module(pte, { registry: registryWith(manager), dataFiles: [ptd as string] });
    let message = '';
    try {
      module.loadMethod('forward');
    } catch (error) {
      expect((error as ModuleLoaderError).code).toBe('ERR_PROGRAM_UNSUPPORTED');
      message = (error as Error).message;
    }
    expect(message).toContain('XNNSoftmax (node 1)');
    expect(message).toContain('aten::add.out (instruction 1)');
    expect(message).toContain('"forward"');
    const [summary] = describePteProgram(new PteProgram(pte, [ptd as string]));
    expect(summary?.unsupported).toHaveLength(2);
    expect(summary?.delegates[0]?.nodes).toEqual({ XNNFullyConnected: 1, XNNSoftmax: 1 });
  });

  test('inspect: methods, delegates, nodes by type and constant keys', () => {
    const layers = makeLayers([4, 6, 2]);
    const { pte, ptd, keys } = writeMlp(dir, 'mlp', layers);
    const program = new PteProgram(pte, [ptd as string]);
    const [summary] = describePteProgram(program);
    expect(summary).toMatchObject({
      name: 'forward',
      inputs: [[1, 4]],
      outputs: [[1, 2]],
      unsupported: [],
    });
    expect(summary?.delegates[0]?.constants.map((constant) => constant.key)).toEqual(keys);
    const firstWeight = (layers[0] as { weight: Float32Array }).weight;
    expect(keys[0]).toBe(sha256(new Uint8Array(firstWeight.buffer)));
    program.close();
  });

  test('a FIFO or a folder as a program or data file is refused at once, an empty .ptd is invalid', () => {
    const { pte } = writeMlp(dir, 'mlp', makeLayers([4, 3]));
    const fifo = join(dir, 'fifo.pte');
    execFileSync('mkfifo', [fifo]);
    // A FIFO with no writer would block a plain open: the open must not wait.
    expect(codeOf(() => new Module(fifo, { registry: registryWith() }).loadMethod('forward'))).toBe(
      'ERR_NOT_A_REGULAR_FILE',
    );
    expect(
      codeOf(() => new Module(pte, { registry: registryWith(), dataFiles: [dir] }).load()),
    ).toMatch(/^ERR_(NOT_A_REGULAR_FILE|PROGRAM_IO)$/);
    const empty = join(dir, 'empty.ptd');
    writeFileSync(empty, new Uint8Array(0));
    expect(
      codeOf(() => new Module(pte, { registry: registryWith(), dataFiles: [empty] }).load()),
    ).toBe('ERR_PROGRAM_INVALID');
  });

  test('corrupt files are ERR_PROGRAM_INVALID: wrong identifier, truncated, eh00 sizes past the end', () => {
    const { pte, ptd } = writeMlp(dir, 'mlp', makeLayers([4, 3]), { constants: 'pte' });
    const good = readFileSync(pte);
    const variants: [string, Uint8Array][] = [
      ['identifier', Uint8Array.from(good, (byte, i) => (i === 5 ? 0x58 : byte))],
      ['truncated', good.subarray(0, good.length - 40)],
      ['header only', good.subarray(0, 12)],
      [
        'program_size',
        (() => {
          const bytes = Uint8Array.from(good);
          new DataView(bytes.buffer).setUint32(16, bytes.length + 1, true);
          return bytes;
        })(),
      ],
    ];
    for (const [name, bytes] of variants) {
      const path = join(dir, `${name}.pte`);
      writeFileSync(path, bytes);
      expect(
        codeOf(() => new Module(path, { registry: registryWith() }).loadMethod('forward')),
        name,
      ).toBe('ERR_PROGRAM_INVALID');
    }
    expect(ptd).toBeNull();
  });
});
