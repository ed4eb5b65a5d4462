import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { fillWeights } from '../src/measure.js';
import { referenceForward } from '../src/mlp-reference.js';
import { layerWeights } from '../src/model.js';
import { EXTERNAL_DATA_ALIGNMENT, ONNX_INPUT, writeOnnxMlp } from '../src/onnx/mlp-onnx.js';
import { expectClose } from './expect-close.js';

const ort = createRequire(import.meta.url)('onnxruntime-node') as typeof Ort;

describe('the ONNX writer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-bench-onnx-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const relu of [true, false]) {
    it(`writes a model onnxruntime-node runs like the JavaScript reference (relu: ${relu})`, async () => {
      const spec = { label: 'tiny', layers: 3, dim: 8 };
      const files = writeOnnxMlp(join(dir, `relu-${relu}`), spec, { relu });
      const session = await ort.InferenceSession.create(files.model, {
        executionProviders: ['cpu'],
        intraOpNumThreads: 1,
      });
      try {
        expect(session.inputNames).toEqual([ONNX_INPUT]);
        expect(session.outputNames).toEqual([files.output]);
        // The batch dimension is symbolic: two batch sizes run through one session.
        for (const batch of [1, 3]) {
          const input = fillWeights(new Float32Array(batch * spec.dim), 7 + batch, 4);
          const results = await session.run({
            [ONNX_INPUT]: new ort.Tensor('float32', input, [batch, spec.dim]),
          });
          const output = results[files.output] as Ort.Tensor;
          expect(output.dims).toEqual([batch, spec.dim]);
          const expected = referenceForward(spec, input, batch, { relu });
          expectClose(output.data as Float32Array, expected);
          if (relu) expect(expected.some((value) => value === 0)).toBe(true);
        }
      } finally {
        await session.release();
      }
    });
  }

  it('stores each initializer at a page-aligned offset of the external data file', () => {
    const spec = { label: 'tiny', layers: 2, dim: 8 };
    const files = writeOnnxMlp(join(dir, 'layout'), spec, { relu: true });
    const data = readFileSync(files.data);
    // Every tensor of this model is under a page: each starts one page after the last.
    let offset = 0;
    for (let layer = 0; layer < spec.layers; layer++) {
      for (const values of Object.values(layerWeights(spec, layer, { relu: true }))) {
        expect(offset % EXTERNAL_DATA_ALIGNMENT).toBe(0);
        const stored = data.subarray(offset, offset + values.byteLength);
        expect(Buffer.compare(stored, Buffer.from(values.buffer))).toBe(0);
        offset += EXTERNAL_DATA_ALIGNMENT;
      }
    }
  });
});
