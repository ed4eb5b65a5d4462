import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeSafetensors, type F32TensorInput } from '@memlayer/module-loader';
import { fillWeights } from './measure.js';
import type { ModelSpec } from './types.js';

/** Layers per safetensors file: keeps the generator's memory at one file's worth. */
const MAX_LAYERS_PER_FILE = 64;
/** Bytes per safetensors file: one file is built in one buffer (Node 20: at most 4 GiB). */
const MAX_FILE_BYTES = 2.5 * 1024 * 1024 * 1024;

export interface ModelOptions {
  /** A relu after every linear layer (the weights are then scaled for it, see layerWeights). */
  readonly relu?: boolean;
}

/**
 * Layer `layer`'s weight [dim, dim] and bias [dim]: the bytes every writer of a model of
 * `spec` uses (safetensors here, ONNX external data in onnx/), and the JavaScript reference.
 */
export function layerWeights(
  spec: ModelSpec,
  layer: number,
  options: ModelOptions = {},
): { weight: Float32Array; bias: Float32Array } {
  // uniform(-a, a) with dim·a²/3 = 1 keeps unit variance through a linear chain; a relu
  // halves the second moment, so with one the weights are sqrt(2) wider (He scaling).
  const scale = Math.sqrt((options.relu === true ? 24 : 12) / spec.dim);
  return {
    weight: fillWeights(new Float32Array(spec.dim * spec.dim), layer + 1, scale),
    bias: fillWeights(new Float32Array(spec.dim), 100_000 + layer, 0.1),
  };
}

/**
 * Writes a deterministic program (manifest + safetensors) of `spec.layers` chained linear
 * layers, `l<i>.weight` [dim, dim] and `l<i>.bias` [dim] (each followed by a relu node with
 * `options.relu`), and returns the manifest path.
 */
export function writeModel(dir: string, spec: ModelSpec, options: ModelOptions = {}): string {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  const layerBytes = (spec.dim * spec.dim + spec.dim) * 4;
  const perFile = Math.max(
    1,
    Math.min(MAX_LAYERS_PER_FILE, Math.floor(MAX_FILE_BYTES / layerBytes)),
  );
  for (let first = 0; first < spec.layers; first += perFile) {
    const tensors: F32TensorInput[] = [];
    for (let layer = first; layer < Math.min(spec.layers, first + perFile); layer++) {
      const { weight, bias } = layerWeights(spec, layer, options);
      tensors.push({ name: `l${layer}.weight`, shape: [spec.dim, spec.dim], data: weight });
      tensors.push({ name: `l${layer}.bias`, shape: [spec.dim], data: bias });
    }
    const file = `weights-${files.length}.safetensors`;
    writeLargeFile(join(dir, file), encodeSafetensors(tensors));
    files.push(file);
  }
  const graph = Array.from({ length: spec.layers }, (_, layer) => {
    const input = layer === 0 ? 'x' : `h${layer - 1}`;
    const linear = { op: 'linear', input, weight: `l${layer}.weight`, bias: `l${layer}.bias` };
    return options.relu === true
      ? [
          { ...linear, output: `z${layer}` },
          { op: 'relu', input: `z${layer}`, output: `h${layer}` },
        ]
      : [{ ...linear, output: `h${layer}` }];
  }).flat();
  const manifest = {
    format: 'memlayer-program',
    version: 1,
    weights: files,
    methods: {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: spec.dim }],
        graph,
        outputs: [`h${spec.layers - 1}`],
      },
    },
  };
  const path = join(dir, 'program.json');
  writeFileSync(path, JSON.stringify(manifest));
  return path;
}

/** One write(2) takes at most 2 GiB - 1 bytes: larger shards are written in pieces. */
function writeLargeFile(path: string, bytes: Uint8Array): void {
  const piece = 1024 * 1024 * 1024;
  const fd = openSync(path, 'w');
  try {
    for (let offset = 0; offset < bytes.byteLength; ) {
      offset += writeSync(fd, bytes, offset, Math.min(piece, bytes.byteLength - offset));
    }
  } finally {
    closeSync(fd);
  }
}
