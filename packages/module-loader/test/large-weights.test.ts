import {
  closeSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  MAX_WINDOW_BYTES,
  Module,
  SafetensorsFile,
} from '../src/index.js';
import { floats } from './fixtures.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-large-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A sparse safetensors file over 4 GiB: a 4.5 GiB U8 tensor of holes (never read), then a
 * linear layer's weight and bias at file offsets past 4 GiB.
 */
function writeSparseShard(path: string, weight: Float32Array, bias: Float32Array): number {
  const pad = 4.5 * 1024 ** 3;
  const header = {
    pad: { dtype: 'U8', shape: [pad], data_offsets: [0, pad] },
    w: { dtype: 'F32', shape: [8, 16], data_offsets: [pad, pad + weight.byteLength] },
    b: {
      dtype: 'F32',
      shape: [8],
      data_offsets: [pad + weight.byteLength, pad + weight.byteLength + bias.byteLength],
    },
  };
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const prefix = Buffer.alloc(8 + json.length);
  prefix.writeBigUInt64LE(BigInt(json.length), 0);
  prefix.write(json, 8);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, prefix, 0, prefix.length, 0);
    const dataStart = prefix.length + pad;
    writeSync(fd, new Uint8Array(weight.buffer), 0, weight.byteLength, dataStart);
    writeSync(fd, new Uint8Array(bias.buffer), 0, bias.byteLength, dataStart + weight.byteLength);
  } finally {
    closeSync(fd);
  }
  return prefix.length + pad;
}

describe('weight files over 4 GiB', () => {
  test('a sparse 4.5 GiB shard opens; tensors past 4 GiB map in a small window and run', () => {
    const weight = floats(8 * 16, 5);
    const bias = floats(8, 6);
    const shard = join(dir, 'model.safetensors');
    const dataAt = writeSparseShard(shard, weight, bias);
    expect(statSync(shard).size).toBeGreaterThan(4 * 1024 ** 3);
    expect(dataAt).toBeGreaterThan(2 ** 32);

    const file = SafetensorsFile.open(shard);
    expect(file.tensors.get('pad')?.byteLength).toBe(4.5 * 1024 ** 3);
    expect([...(file.get('w')?.data.subarray(0, 3) ?? [])]).toEqual([...weight.subarray(0, 3)]);
    // Only the window holding w was mapped, not the file.
    expect(file.mappedBytes).toBeLessThan(MAX_WINDOW_BYTES);
    expect(file.counters.stats.bytesMapped).toBeLessThan(64 * 1024);
    file.close();

    writeFileSync(
      join(dir, 'program.json'),
      JSON.stringify({
        format: 'memlayer-program',
        version: 1,
        weights: ['model.safetensors'],
        methods: {
          forward: {
            backend: 'XnnpackBackend',
            inputs: [{ name: 'x', features: 16 }],
            graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w', bias: 'b' }],
            outputs: ['y'],
          },
        },
      }),
    );
    const module = new Module(join(dir, 'program.json'), { registry: createDefaultRegistry() });
    module.load(
      new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', join(dir, 'cache.xpwc')),
      ),
    );
    const x = floats(16, 9);
    const [y] = module.execute('forward', [{ shape: [1, 16], data: x }]);
    for (let o = 0; o < 8; o++) {
      let sum = bias[o] as number;
      for (let k = 0; k < 16; k++) sum += (x[k] as number) * (weight[o * 16 + k] as number);
      expect(y?.data[o]).toBeCloseTo(sum, 5);
    }
    module.dispose();
  });
});
