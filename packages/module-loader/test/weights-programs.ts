// Programs of linear layers for the content-keyed cache tests: names, shapes, values and
// file layout are chosen by the test, so programs can share names, bytes, or neither.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BackendOptions,
  BackendRegistry,
  encodeSafetensors,
  type F32TensorInput,
  LoadBackendOptionsMap,
  Module,
  type ProgramManifest,
  type Tensor,
  XnnpackBackend,
} from '../src/index.js';
import { floats } from './fixtures.js';

export interface LayerSpec {
  weight: string;
  bias?: string | undefined;
  out: number;
  in: number;
  /** Seed of the weight values (bias: seed + 1). */
  seed: number;
  /** Index of the safetensors file holding this layer's tensors (default 0). */
  file?: number;
}

/** Writes program.json + weights-<i>.safetensors into `dir`; linear → relu → linear … */
export function writeLinearProgram(dir: string, layers: readonly LayerSpec[]): string {
  mkdirSync(dir, { recursive: true });
  const files: F32TensorInput[][] = [];
  const graph: unknown[] = [];
  let value = 'x';
  layers.forEach((layer, i) => {
    const index = layer.file ?? 0;
    files[index] ??= [];
    const tensors = files[index];
    tensors.push({
      name: layer.weight,
      shape: [layer.out, layer.in],
      data: floats(layer.out * layer.in, layer.seed),
    });
    if (layer.bias) {
      tensors.push({
        name: layer.bias,
        shape: [layer.out],
        data: floats(layer.out, layer.seed + 1),
      });
    }
    const output = `h${i}`;
    graph.push({
      op: 'linear',
      input: value,
      output,
      weight: layer.weight,
      ...(layer.bias ? { bias: layer.bias } : {}),
    });
    value = output;
    if (i + 1 < layers.length) {
      graph.push({ op: 'relu', input: value, output: `a${i}` });
      value = `a${i}`;
    }
  });
  const weights = files.map((tensors, i) => {
    const name = `weights-${i}.safetensors`;
    writeFileSync(join(dir, name), encodeSafetensors(tensors ?? []));
    return name;
  });
  const manifestPath = join(dir, 'program.json');
  writeFileSync(
    manifestPath,
    JSON.stringify({
      format: 'memlayer-program',
      version: 1,
      weights,
      methods: {
        forward: {
          backend: 'XnnpackBackend',
          inputs: [{ name: 'x', features: layers[0]?.in }],
          graph,
          outputs: [value],
        },
      },
    }),
  );
  return manifestPath;
}

/** A deterministic 3-row input for the program's forward method. */
export function programInput(manifest: ProgramManifest): Tensor {
  const method = manifest.methods.get('forward');
  const features = method?.kind === 'graph' ? (method.inputs[0]?.features ?? 1) : 1;
  return { shape: [3, features], data: floats(3 * features, 99) };
}

/** The heap-only reference: the weight cache off (a private cache, names not content). */
export function heapOnlyOutput(manifestPath: string): string {
  const module = new Module(manifestPath, {
    registry: new BackendRegistry().register(new XnnpackBackend()),
  });
  module.load(
    new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions().setOption('weight_cache_enabled', false),
    ),
  );
  const [output] = module.execute('forward', [programInput(module.programManifest())]);
  module.dispose();
  return sha256(output?.data ?? new Float32Array(0));
}

export function sha256(data: Float32Array): string {
  return createHash('sha256')
    .update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    .digest('hex');
}
