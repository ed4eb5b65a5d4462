import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackendOptions,
  encodeSafetensors,
  type F32TensorInput,
  LoadBackendOptionsMap,
} from '../src/index.js';

/** Deterministic pseudo-random floats in [-1, 1) (xorshift32). */
export function floats(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    out[i] = state / 2 ** 31 - 1;
  }
  return out;
}

export interface MlpFixture {
  dir: string;
  manifestPath: string;
  layers: {
    weight: Float32Array;
    bias: Float32Array | null;
    inFeatures: number;
    outFeatures: number;
  }[];
  cleanup(): void;
}

/** A program folder: linear → relu → linear → gelu → linear, weights in one safetensors file. */
export function writeMlpProgram(sizes: number[] = [16, 32, 24, 8], seed = 7): MlpFixture {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-program-'));
  const layers: MlpFixture['layers'] = [];
  const tensors: F32TensorInput[] = [];
  for (let i = 0; i + 1 < sizes.length; i++) {
    const inFeatures = sizes[i] as number;
    const outFeatures = sizes[i + 1] as number;
    const weight = floats(inFeatures * outFeatures, seed + i * 2);
    const bias = i === 1 ? null : floats(outFeatures, seed + i * 2 + 1);
    layers.push({ weight, bias, inFeatures, outFeatures });
    tensors.push({ name: `l${i}.weight`, shape: [outFeatures, inFeatures], data: weight });
    if (bias) tensors.push({ name: `l${i}.bias`, shape: [outFeatures], data: bias });
  }
  writeFileSync(join(dir, 'model.safetensors'), encodeSafetensors(tensors));
  const graph: unknown[] = [];
  let value = 'x';
  layers.forEach((layer, i) => {
    graph.push({
      op: 'linear',
      input: value,
      output: `h${i}`,
      weight: `l${i}.weight`,
      ...(layer.bias ? { bias: `l${i}.bias` } : {}),
    });
    value = `h${i}`;
    if (i + 1 < layers.length) {
      graph.push({ op: i % 2 === 0 ? 'relu' : 'gelu', input: value, output: `a${i}` });
      value = `a${i}`;
    }
  });
  const manifest = {
    format: 'memlayer-program',
    version: 1,
    weights: ['model.safetensors'],
    methods: {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: sizes[0] }],
        graph,
        outputs: [value],
      },
    },
  };
  const manifestPath = join(dir, 'program.json');
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  return {
    dir,
    manifestPath,
    layers,
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Plain reference of the fixture's forward pass (f64 accumulation). */
export function referenceForward(
  fixture: MlpFixture,
  input: Float32Array,
  rows: number,
): Float32Array {
  let x = input;
  fixture.layers.forEach((layer, i) => {
    const y = new Float32Array(rows * layer.outFeatures);
    for (let r = 0; r < rows; r++) {
      for (let o = 0; o < layer.outFeatures; o++) {
        let sum = layer.bias ? (layer.bias[o] as number) : 0;
        for (let k = 0; k < layer.inFeatures; k++) {
          sum +=
            (x[r * layer.inFeatures + k] as number) *
            (layer.weight[o * layer.inFeatures + k] as number);
        }
        const isLast = i + 1 === fixture.layers.length;
        y[r * layer.outFeatures + o] = isLast ? sum : activation(i, sum);
      }
    }
    x = y;
  });
  return x;
}

function activation(layer: number, x: number): number {
  if (layer % 2 === 0) return Math.max(0, x);
  return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
}

/** Backend options naming `path` as the XNNPACK cache file (saved at once when `saveNow`). */
export function cacheOptions(path: string, saveNow = false): LoadBackendOptionsMap {
  const options = new BackendOptions().setOption('packed_cache_path', path);
  if (saveNow) options.setOption('save_weight_cache_on_disk', true);
  return new LoadBackendOptionsMap().setOptions('XnnpackBackend', options);
}
