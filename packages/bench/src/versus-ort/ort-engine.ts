// onnxruntime-node's side of a child: require it (timed: nothing loaded it before), then
// InferenceSession.create with the options the parent chose (ort-sessions.ts).
import { createRequire } from 'node:module';
import type * as Ort from 'onnxruntime-node';
import { nowMs } from '../measure.js';
import type { OpenedModel } from './opened-model.js';
import type { OrtStart } from './protocol.js';

export async function openOrt(start: OrtStart): Promise<OpenedModel> {
  const importStart = nowMs();
  const ort = createRequire(import.meta.url)('onnxruntime-node') as typeof Ort;
  const importMs = nowMs() - importStart;
  const readyStart = nowMs();
  const session = await ort.InferenceSession.create(
    start.model,
    start.options as Ort.InferenceSession.SessionOptions,
  );
  const readyMs = nowMs() - readyStart;
  const [input] = session.inputNames;
  const [output] = session.outputNames;
  if (input === undefined || output === undefined) {
    throw new Error(`${start.model} has no input or no output`);
  }
  return {
    importMs,
    readyMs,
    async forward(data, batch) {
      const results = await session.run({
        [input]: new ort.Tensor('float32', data, [batch, data.length / batch]),
      });
      return (results[output] as Ort.Tensor).data as Float32Array;
    },
    close: () => session.release(),
  };
}
