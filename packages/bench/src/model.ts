import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeSafetensors, type F32TensorInput } from '@memlayer/module-loader';
import { fillWeights } from './measure.js';
import type { ModelSpec } from './types.js';

/** Layers per safetensors file: keeps the generator's memory at one file's worth. */
const MAX_LAYERS_PER_FILE = 64;
/** Bytes per safetensors file: one file is built in one buffer (Node 20: at most 4 GiB). */
const MAX_FILE_BYTES = 2.5 * 1024 * 1024 * 1024;

/**
 * Writes a deterministic program (manifest + safetensors) of `spec.layers` chained linear
 * layers, `l<i>.weight` [dim, dim] and `l<i>.bias` [dim], and returns the manifest path.
 */
export function writeModel(dir: string, spec: ModelSpec): string {
  mkdirSync(dir, { recursive: true });
  const scale = Math.sqrt(12 / spec.dim); // uniform(-a, a) with dim·a²/3 = 1
  const files: string[] = [];
  const layerBytes = (spec.dim * spec.dim + spec.dim) * 4;
  const perFile = Math.max(
    1,
    Math.min(MAX_LAYERS_PER_FILE, Math.floor(MAX_FILE_BYTES / layerBytes)),
  );
  for (let first = 0; first < spec.layers; first += perFile) {
    const tensors: F32TensorInput[] = [];
    for (let layer = first; layer < Math.min(spec.layers, first + perFile); layer++) {
      const weight = fillWeights(new Float32Array(spec.dim * spec.dim), layer + 1, scale);
      const bias = fillWeights(new Float32Array(spec.dim), 100_000 + layer, 0.1);
      tensors.push({ name: `l${layer}.weight`, shape: [spec.dim, spec.dim], data: weight });
      tensors.push({ name: `l${layer}.bias`, shape: [spec.dim], data: bias });
    }
    const file = `weights-${files.length}.safetensors`;
    writeLargeFile(join(dir, file), encodeSafetensors(tensors));
    files.push(file);
  }
  const graph = Array.from({ length: spec.layers }, (_, layer) => ({
    op: 'linear',
    input: layer === 0 ? 'x' : `h${layer - 1}`,
    output: `h${layer}`,
    weight: `l${layer}.weight`,
    bias: `l${layer}.bias`,
  }));
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
