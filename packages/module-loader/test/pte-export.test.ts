import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { encodeSafetensors, exportProgram, type F32TensorInput } from '../src/index.js';
import { floats, type MlpFixture, writeMlpProgram } from './fixtures.js';
import type { FlatTable } from './flatbuffer-table.js';
import { readPtd, readPte, xnnGraphOf } from './pte-files.js';

const sha256 = (data: Float32Array) =>
  createHash('sha256')
    .update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    .digest('hex');
const bytesOf = (data: Float32Array) =>
  new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function mlp(): MlpFixture {
  const fixture = writeMlpProgram([16, 32, 24, 8]);
  cleanups.push(fixture.cleanup);
  return fixture;
}

/** A folder with `weights` and a manifest of `methods`; returns the manifest's path. */
function writeProgram(weights: F32TensorInput[], methods: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-pte-export-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'w.safetensors'), encodeSafetensors(weights));
  const path = join(dir, 'net.json');
  writeFileSync(
    path,
    JSON.stringify({ format: 'memlayer-program', version: 1, weights: ['w.safetensors'], methods }),
  );
  return path;
}

/** Each XNode as [union type, output_min_max or null]. */
function nodeKinds(graph: FlatTable): [number, [number, number] | null][] {
  return graph.tables(1).map((node) => {
    const minMax = node.table(3);
    return [node.u8(0), minMax === null ? null : [minMax.f32(0), minMax.f32(1)]];
  });
}

function forwardGraph(ptePath: string): FlatTable {
  const pte = readPte(readFileSync(ptePath));
  const [plan] = pte.program.tables(1) as [FlatTable];
  const [delegate] = plan.tables(7) as [FlatTable];
  return xnnGraphOf(pte.segment((delegate.table(1) as FlatTable).u32(1)));
}

describe('exportProgram', () => {
  test('writes <name>.pte and <name>.ptd beside the manifest, constants keyed by SHA-256', async () => {
    const fixture = mlp();
    const result = await exportProgram(fixture.manifestPath);
    expect(result).toEqual({
      pte: join(fixture.dir, 'program.pte'),
      ptd: join(fixture.dir, 'program.ptd'),
      methods: ['forward'],
      skipped: [],
      constants: 5,
    });
    const ptd = readPtd(readFileSync(result.ptd as string));
    const expected = new Map<string, Uint8Array>();
    for (const layer of fixture.layers) {
      expected.set(sha256(layer.weight), bytesOf(layer.weight));
      if (layer.bias) expected.set(sha256(layer.bias), bytesOf(layer.bias));
    }
    expect(new Map([...ptd].map(([key, bytes]) => [key, [...bytes]]))).toEqual(
      new Map([...expected].map(([key, bytes]) => [key, [...bytes]])),
    );
    const pte = readPte(readFileSync(result.pte));
    expect(pte.program.has(7)).toBe(false); // no named data in the .pte
    const graph = forwardGraph(result.pte);
    const keys = graph.tables(8).map((entry) => entry.str(2));
    expect(keys[0]).toBe('');
    expect(new Set(keys.slice(1))).toEqual(new Set(expected.keys()));
  });

  test('fuses linear → relu into the fully-connected node; gelu is XNNGelu', async () => {
    const result = await exportProgram(mlp().manifestPath);
    const graph = forwardGraph(result.pte);
    const inf = Number.POSITIVE_INFINITY;
    // linear+relu, linear, gelu, linear (fixtures.ts: linear → relu → linear → gelu → linear)
    expect(nodeKinds(graph)).toEqual([
      [2, [0, inf]],
      [2, null],
      [42, null],
      [2, null],
    ]);
    const values = graph.tables(2).map((value) => value.table(1) as FlatTable);
    const externals = values
      .filter((v) => v.u32(5) !== 0)
      .map((v) => [v.u32s(2), v.u32(4), v.u32(5)]);
    expect(externals).toEqual([
      [[1, 16], 0, 1],
      [[1, 8], 1, 2],
    ]);
    expect(graph.u32(3)).toBe(2);
    const fc = (graph.tables(1)[1] as FlatTable).table(1) as FlatTable;
    expect(fc.u32(2)).toBe(0xffff_ffff); // l1 has no bias
    const filter = values[fc.u32(1)] as FlatTable;
    expect(filter.u32s(2)).toEqual([24, 32]);
  });

  test('the plan: [1, features] f32 tensors, planned offsets, one DelegateCall', async () => {
    const result = await exportProgram(mlp().manifestPath);
    const [plan] = readPte(readFileSync(result.pte)).program.tables(1) as [FlatTable];
    expect(plan.str(0)).toBe('forward');
    const tensors = plan.tables(2).map((value) => {
      expect(value.u8(0)).toBe(5);
      const tensor = value.table(1) as FlatTable;
      const allocation = tensor.table(6) as FlatTable;
      return [
        tensor.u8(0),
        tensor.i32s(2),
        [...tensor.bytes(3)],
        allocation.u32(0),
        allocation.u32(1),
      ];
    });
    expect(tensors).toEqual([
      [6, [1, 16], [0, 1], 1, 0],
      [6, [1, 8], [0, 1], 1, 64],
    ]);
    expect([plan.i32s(3), plan.i32s(4)]).toEqual([[0], [1]]);
    const [instruction] = (plan.tables(5)[0] as FlatTable).tables(2) as [FlatTable];
    expect(instruction.u8(0)).toBe(2);
    expect((instruction.table(1) as FlatTable).i32s(1)).toEqual([0, 1]);
    expect(plan.u64s(8)).toEqual([0n, 96n]);
  });

  test("constants: 'pte' puts them in the .pte's named data and writes no .ptd", async () => {
    const fixture = mlp();
    const outDir = join(fixture.dir, 'out');
    const result = await exportProgram(fixture.manifestPath, { outDir, constants: 'pte' });
    expect(result.ptd).toBeNull();
    expect(result.pte).toBe(join(outDir, 'program.pte'));
    expect(existsSync(join(outDir, 'program.ptd'))).toBe(false);
    const pte = readPte(readFileSync(result.pte));
    const named = new Map(
      pte.program.tables(7).map((entry) => [entry.str(0), [...pte.segment(entry.u32(1))]]),
    );
    const first = fixture.layers[0] as MlpFixture['layers'][number];
    expect(named.get(sha256(first.weight))).toEqual([...bytesOf(first.weight)]);
    expect(named.size).toBe(5);
  });

  test('equal tensors under two names are one constant; a shared relu input is an XNNClamp', async () => {
    const weight = floats(12, 3);
    const path = writeProgram(
      [
        { name: 'a', shape: [3, 4], data: weight },
        { name: 'b', shape: [3, 4], data: weight.slice() },
      ],
      {
        forward: {
          backend: 'XnnpackBackend',
          inputs: [{ name: 'x', features: 4 }],
          graph: [
            { op: 'linear', input: 'x', output: 'h', weight: 'a', output_min: -1, output_max: 2 },
            { op: 'relu', input: 'h', output: 'r' },
            { op: 'linear', input: 'x', output: 'k', weight: 'b' },
          ],
          outputs: ['h', 'r', 'k'],
        },
      },
    );
    const result = await exportProgram(path);
    expect(result.constants).toBe(1);
    expect([...readPtd(readFileSync(result.ptd as string)).keys()]).toEqual([sha256(weight)]);
    const graph = forwardGraph(result.pte);
    const inf = Number.POSITIVE_INFINITY;
    // h is an output too, so the relu stays: XNNClamp {0, +inf}; h keeps its own bounds
    expect(nodeKinds(graph)).toEqual([
      [2, [-1, 2]],
      [6, [0, inf]],
      [2, null],
    ]);
    // two values, two constant_data entries, one key
    const keys = graph.tables(8).map((entry) => entry.str(2));
    expect(keys).toEqual(['', sha256(weight), sha256(weight)]);
  });

  test('leaves out a method for another backend (reported), and refuses a program with none to export', async () => {
    const path = writeProgram([{ name: 'w', shape: [2, 2], data: floats(4, 1) }], {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: 2 }],
        graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w' }],
        outputs: ['y'],
      },
      kernel: { backend: 'AscendSimBackend', callable: 'k.bin', callableId: 0 },
    });
    const exported = await exportProgram(path);
    expect(exported.methods).toEqual(['forward']);
    expect(exported.skipped).toEqual([{ method: 'kernel', backend: 'AscendSimBackend' }]);
    const other = writeProgram([{ name: 'w', shape: [2, 2], data: floats(4, 1) }], {
      forward: {
        backend: 'AscendSimBackend',
        inputs: [{ name: 'x', features: 2 }],
        graph: [{ op: 'relu', input: 'x', output: 'y' }],
        outputs: ['y'],
      },
    });
    await expect(exportProgram(other)).rejects.toMatchObject({
      code: 'ERR_MANIFEST_INVALID',
      field: 'methods',
    });
  });

  test('refuses a weight whose shape does not fit its input, and bad options', async () => {
    const path = writeProgram([{ name: 'w', shape: [2, 3], data: floats(6, 1) }], {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: 2 }],
        graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w' }],
        outputs: ['y'],
      },
    });
    await expect(exportProgram(path)).rejects.toMatchObject({
      code: 'ERR_MANIFEST_INVALID',
      field: 'methods.forward.graph[0].weight',
    });
    await expect(exportProgram(path, { constants: 'elsewhere' as 'pte' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
  });
});
