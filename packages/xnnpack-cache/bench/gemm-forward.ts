// Forward passes of an MLP through fully-connected operators: the JavaScript kernel against
// the native ones (threads 1 and 2), each configuration in a fresh process. Two models of
// 64 MiB of f32 weights each: 1024 layers of 128×128 and 64 layers of 512×512, at batch 1
// and 64; outputs clamped to [-1, 1] between layers (a bounded activation keeps the values
// out of the denormal range over 1024 layers). Prints the median wall time of a forward
// pass per configuration; asserts nothing.
//
// Run: npx tsx --conditions=memlayer-source bench/gemm-forward.ts
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  InMemoryNamedDataMap,
  type KernelChoice,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { fill } from './fill.js';

interface Config {
  dim: number;
  layers: number;
  batch: number;
  kernels: KernelChoice;
  threads: number;
}

interface Result extends Config {
  medianMs: number;
  forwards: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** One configuration, in this process: builds the model, times forward passes. */
function measure(config: Config): Result {
  const { dim, layers, batch, kernels, threads } = config;
  const map = new InMemoryNamedDataMap();
  for (let layer = 0; layer < layers; layer++) {
    map.set(tensorView(`w${layer}`, [dim, dim], fill(dim * dim, layer + 1)));
    map.set(tensorView(`b${layer}`, [dim], fill(dim, layer + 7)));
  }
  const cache = new XNNWeightsCache();
  cache.initializeForRuntime(map);
  const operators: FullyConnectedOperator[] = [];
  for (let layer = 0; layer < layers; layer++) {
    operators.push(
      createFullyConnectedNcF32({
        cache,
        inputChannels: dim,
        outputChannels: dim,
        kernel: cache.loadUnpackedData(`w${layer}`),
        bias: cache.loadUnpackedData(`b${layer}`),
        outputMin: -1,
        outputMax: 1,
        kernels,
        threads,
      }),
    );
  }
  cache.finalizeForRuntime();
  const input = fill(batch * dim, 99);
  const buffers = [new Float32Array(batch * dim), new Float32Array(batch * dim)];
  const forward = () => {
    let x = input;
    for (let layer = 0; layer < layers; layer++) {
      const y = buffers[layer & 1] as Float32Array;
      (operators[layer] as FullyConnectedOperator).run(x, batch, y);
      x = y;
    }
  };
  // Enough passes for a stable median without minutes of the JavaScript kernel.
  const forwards = kernels === 'javascript' ? 5 : 21;
  forward();
  forward();
  const times: number[] = [];
  for (let i = 0; i < forwards; i++) {
    const start = process.hrtime.bigint();
    forward();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { ...config, medianMs: median(times), forwards };
}

const self = fileURLToPath(import.meta.url);
if (process.argv[2] === '--child') {
  console.log(JSON.stringify(measure(JSON.parse(process.argv[3] as string) as Config)));
} else {
  const configs: Config[] = [];
  for (const [dim, layers] of [
    [128, 1024],
    [512, 64],
  ] as const) {
    for (const batch of [1, 64]) {
      configs.push({ dim, layers, batch, kernels: 'javascript', threads: 1 });
      for (const threads of [1, 2])
        configs.push({ dim, layers, batch, kernels: 'native', threads });
    }
  }
  console.log('| model | batch | kernel | threads | forward, median ms |');
  console.log('|---|---|---|---|---|');
  for (const config of configs) {
    // A fresh process per configuration: no JIT state, pool or cache carried over.
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, self, '--child', JSON.stringify(config)],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
    );
    if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').pop() as string) as Result;
    console.log(
      `| ${result.layers}×${result.dim}×${result.dim} | ${result.batch} | ${result.kernels} | ${result.threads} | ${result.medianMs.toFixed(2)} |`,
    );
  }
}
