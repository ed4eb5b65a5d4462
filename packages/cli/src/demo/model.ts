import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildChipCallable, orchestrationObject } from '@memlayer/device-runner';
import { encodeSafetensors, type F32TensorInput } from '@memlayer/module-loader';
import { deterministicInput } from '../run-program.js';

export interface DemoModel {
  dir: string;
  programPath: string;
  layers: number;
  features: number;
  weightBytes: number;
  callableBytes: number;
}

/**
 * Writes a deterministic model: `layers` linear layers of features×features f32 with bias
 * and alternating relu/gelu (method "forward", XnnpackBackend), and a ChipCallable
 * (method "npu", AscendSimBackend) whose orchestration object is a real ELF64 .so.
 */
export function writeDemoModel(dir: string, layers: number, features: number): DemoModel {
  const tensors: F32TensorInput[] = [];
  const graph: unknown[] = [];
  let value = 'x';
  for (let layer = 0; layer < layers; layer++) {
    tensors.push(
      {
        name: `layers.${layer}.weight`,
        shape: [features, features],
        data: scaled(deterministicInput(features, features, 100 + layer), 1 / Math.sqrt(features)),
      },
      {
        name: `layers.${layer}.bias`,
        shape: [features],
        data: deterministicInput(1, features, 500 + layer),
      },
    );
    graph.push({
      op: 'linear',
      input: value,
      output: `h${layer}`,
      weight: `layers.${layer}.weight`,
      bias: `layers.${layer}.bias`,
    });
    value = `h${layer}`;
    if (layer + 1 < layers) {
      graph.push({ op: layer % 2 === 0 ? 'relu' : 'gelu', input: value, output: `a${layer}` });
      value = `a${layer}`;
    }
  }
  const weights = encodeSafetensors(tensors, { producer: 'memlayer demo' });
  writeFileSync(join(dir, 'model.safetensors'), weights);
  const kernel = Uint8Array.from({ length: 64 * 1024 }, (_, i) => (i * 131) & 0xff);
  const callable = buildChipCallable({
    orch: orchestrationObject(7),
    children: [0, 1, 2, 3].map((funcId) => ({
      funcId,
      core: { binary: kernel.subarray(0, 16 * 1024 * (funcId + 1)) },
    })),
  });
  writeFileSync(join(dir, 'model.chipcallable'), callable);
  const programPath = join(dir, 'program.json');
  writeFileSync(
    programPath,
    JSON.stringify(
      {
        format: 'memlayer-program',
        version: 1,
        weights: ['model.safetensors'],
        methods: {
          forward: {
            backend: 'XnnpackBackend',
            inputs: [{ name: 'x', features }],
            graph,
            outputs: [value],
          },
          npu: { backend: 'AscendSimBackend', callable: 'model.chipcallable', callableId: 1 },
        },
      },
      null,
      2,
    ),
  );
  return {
    dir,
    programPath,
    layers,
    features,
    weightBytes: weights.byteLength,
    callableBytes: callable.byteLength,
  };
}

/** Keeps activations in range through many layers. */
function scaled(values: Float32Array, factor: number): Float32Array {
  for (let i = 0; i < values.length; i++) values[i] = (values[i] as number) * factor;
  return values;
}
