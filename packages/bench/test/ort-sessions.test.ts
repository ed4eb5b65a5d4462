import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { fillWeights } from '../src/measure.js';
import { referenceForward } from '../src/mlp-reference.js';
import { ONNX_INPUT, writeOnnxMlp } from '../src/onnx/mlp-onnx.js';
import { ortLoadProblem } from '../src/versus-ort/ort-available.js';
import {
  loadOptions,
  type OrtStartKind,
  ortFiles,
  saveOptions,
} from '../src/versus-ort/ort-sessions.js';
import { expectClose } from './expect-close.js';

const ort = createRequire(import.meta.url)('onnxruntime-node') as typeof Ort;

describe("onnxruntime-node's starts in the comparison", () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-bench-ort-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('saves the optimized and the prepacked model with the session options the comparison uses, and loads them', async () => {
    // Weights of 4 KiB: over the 1 KiB from which the saved models keep initializers external.
    const spec = { label: 'small', layers: 3, dim: 32 };
    const onnxDir = join(dir, 'saved');
    const plain = writeOnnxMlp(onnxDir, spec, { relu: true });
    const input = fillWeights(new Float32Array(2 * spec.dim), 11, 4);
    const expected = referenceForward(spec, input, 2, { relu: true });
    const run = async (model: string, options: Record<string, unknown>) => {
      const session = await ort.InferenceSession.create(
        model,
        options as Ort.InferenceSession.SessionOptions,
      );
      try {
        const results = await session.run({
          [ONNX_INPUT]: new ort.Tensor('float32', input, [2, spec.dim]),
        });
        return (results[plain.output] as Ort.Tensor).data as Float32Array;
      } finally {
        await session.release();
      }
    };
    for (const kind of ['optimized', 'prepacked'] as const satisfies OrtStartKind[]) {
      const files = ortFiles(onnxDir, plain, kind);
      expectClose(await run(plain.model, saveOptions(kind, files, 1)), expected);
      // The saved model and its external data file exist, and a later session runs them.
      expect(readFileSync(files.model).byteLength).toBeGreaterThan(0);
      expect(readFileSync(files.data).byteLength).toBeGreaterThan(0);
      expectClose(await run(files.model, loadOptions(kind, 1)), expected);
    }
    // Prepacked weights are extra data: the prepacked file holds more than the optimized one.
    const optimized = readFileSync(ortFiles(onnxDir, plain, 'optimized').data).byteLength;
    const prepacked = readFileSync(ortFiles(onnxDir, plain, 'prepacked').data).byteLength;
    expect(prepacked).toBeGreaterThan(optimized);
  });

  it('finds onnxruntime-node loadable (a devDependency: the comparison is not skipped)', () => {
    expect(ortLoadProblem()).toBeNull();
  });
});
