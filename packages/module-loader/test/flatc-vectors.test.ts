// Programs compiled by flatc from ExecuTorch's schemas (not by this package's writer), with
// the outputs ExecuTorch's own runtime gave for them (fixtures/flatc-vectors/README.md).
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BackendRegistry, Module, XnnpackBackend } from '../src/index.js';

const dir = join(import.meta.dirname, 'fixtures', 'flatc-vectors');
const half = (rows: number) => ({
  shape: [rows, 4] as [number, number],
  data: new Float32Array(rows * 4).fill(0.5),
});

function run(name: string, data: boolean, input: ReturnType<typeof half>): number[] {
  const module = new Module(join(dir, `${name}.pte`), {
    registry: new BackendRegistry().register(new XnnpackBackend()),
    dataFiles: data ? [join(dir, `${name}.ptd`)] : [],
  });
  try {
    return [...((module.execute('forward', [input])[0]?.data as Float32Array) ?? [])];
  } finally {
    module.dispose();
  }
}

describe('programs compiled by flatc from ExecuTorch schemas', () => {
  test('constants in a .ptd, in the payload by offset, and no bias: ExecuTorch runtime outputs', () => {
    const withBias = [1.00000012, 0.800000012, 3.0999999, 1.00000012, 0.800000012, 3.0999999];
    const withoutBias = [0.5, 1.29999995, 2.0999999, 0.5, 1.29999995, 2.0999999];
    for (const [name, data, expected] of [
      ['named', true, withBias],
      ['offset', false, withBias],
      ['nobias', true, withoutBias],
    ] as const) {
      const out = run(name, data, half(2));
      expect(out).toHaveLength(expected.length);
      for (const [i, value] of out.entries()) {
        expect(value, `${name}[${i}]`).toBeCloseTo(expected[i] as number, 6);
      }
    }
  });

  test('a dynamic-bound input [1, 2, 3, 4] gives ExecuTorch runtime outputs', () => {
    const out = run('dyn', true, { shape: [1, 4], data: Float32Array.of(1, 2, 3, 4) });
    expect(out.map((value) => Math.round(value * 1e5) / 1e5)).toEqual([3.5, 6.5, 12]);
  });
});
