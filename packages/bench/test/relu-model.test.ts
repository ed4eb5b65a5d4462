import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportProgram, Module } from '@memlayer/module-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { fillWeights } from '../src/measure.js';
import { referenceForward } from '../src/mlp-reference.js';
import { writeModel } from '../src/model.js';
import { expectClose } from './expect-close.js';

describe('a model with a relu after every linear layer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-bench-relu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs as a JSON program and as the .pte + .ptd exported from it like the JavaScript reference', async () => {
    const spec = { label: 'tiny', layers: 4, dim: 16 };
    const program = writeModel(dir, spec, { relu: true });
    const { pte, ptd } = await exportProgram(program);
    const batch = 3;
    const input = fillWeights(new Float32Array(batch * spec.dim), 5, 4);
    const expected = referenceForward(spec, input, batch, { relu: true });
    expect(expected.some((value) => value === 0)).toBe(true);
    for (const module of [new Module(program), new Module(pte, { dataFiles: [ptd as string] })]) {
      try {
        module.load();
        module.loadMethod('forward');
        const [output] = module.execute('forward', [{ shape: [batch, spec.dim], data: input }]);
        expectClose(output?.data ?? new Float32Array(0), expected);
      } finally {
        module.dispose();
      }
    }
  });
});
