// Packing throughput and fully-connected run time. Prints numbers; asserts nothing.
// Run: pnpm --filter @memlayer/xnnpack-cache bench
import {
  createFullyConnectedNcF32,
  GEMM_TILINGS,
  type GemmTiling,
  InMemoryNamedDataMap,
  packedSize,
  packF32GemmGoiW,
  packingStats,
  resetPackingStats,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { fill } from './fill.js';

const LAYERS = 64;
const DIM = 1024;
/** Distinct source layers, cycled: 64 MB of sources is beyond any last-level cache. */
const DISTINCT_SOURCES = 16;
const TILINGS: Array<[string, GemmTiling]> = [
  ['nr=8 kr=1 sr=1', GEMM_TILINGS.nr8kr1sr1],
  ['nr=4 kr=2 sr=2', GEMM_TILINGS.nr4kr2sr2],
  ['nr=16 kr=4 sr=1', GEMM_TILINGS.nr16kr4sr1],
];

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const sources = Array.from({ length: DISTINCT_SOURCES }, (_, i) => fill(DIM * DIM, i + 1));
const biases = Array.from({ length: DISTINCT_SOURCES }, (_, i) => fill(DIM, 100 + i));
const weightBytes = LAYERS * DIM * DIM * 4;
console.log(
  `weights: ${LAYERS} layers of ${DIM}x${DIM} f32 = ${weightBytes / 2 ** 20} MB (${DISTINCT_SOURCES} distinct sources cycled)`,
);

console.log('\n# pack_f32_gemm_goi_w throughput (zero-fill + pack, unpacked bytes per second)');
for (const [label, tiling] of TILINGS) {
  const shape = { nc: DIM, kc: DIM, ...tiling };
  const out = new Uint8Array(packedSize(shape));
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    for (let layer = 0; layer < LAYERS; layer++) {
      out.fill(0);
      packF32GemmGoiW(
        shape,
        sources[layer % DISTINCT_SOURCES] as Float32Array,
        biases[layer % DISTINCT_SOURCES] as Float32Array,
        out,
      );
    }
    best = Math.min(best, ms(start));
  }
  console.log(
    `${label.padEnd(16)} ${best.toFixed(1).padStart(8)} ms  ${(weightBytes / 1e9 / (best / 1e3)).toFixed(2)} GB/s (best of 3)`,
  );
}

console.log(
  '\n# cache: build 64 operators cold (pack) vs a second runtime on the same cache (hit)',
);
{
  const map = new InMemoryNamedDataMap();
  for (let layer = 0; layer < LAYERS; layer++) {
    const i = layer % DISTINCT_SOURCES;
    map.set(tensorView(`l${layer}.weight`, [DIM, DIM], sources[i] as Float32Array));
    map.set(tensorView(`l${layer}.bias`, [DIM], biases[i] as Float32Array));
  }
  const cache = new XNNWeightsCache();
  const build = () => {
    const start = process.hrtime.bigint();
    cache.initializeForRuntime(map);
    for (let layer = 0; layer < LAYERS; layer++) {
      createFullyConnectedNcF32({
        cache,
        inputChannels: DIM,
        outputChannels: DIM,
        kernel: cache.loadUnpackedData(`l${layer}.weight`),
        bias: cache.loadUnpackedData(`l${layer}.bias`),
      });
    }
    cache.finalizeForRuntime();
    return ms(start);
  };
  resetPackingStats();
  const cold = build();
  const coldPacks = packingStats().calls;
  resetPackingStats();
  const warm = build();
  console.log(
    `cold runtime: ${cold.toFixed(1)} ms (${coldPacks} packs; includes first touch of ${LAYERS * 4} MB of fresh heap)`,
  );
  console.log(
    `warm runtime: ${warm.toFixed(2)} ms (${packingStats().calls} packs)  ratio ${(cold / warm).toFixed(0)}x`,
  );
  console.log(`packed bytes held: ${(cache.stats().packedBytes / 2 ** 20).toFixed(1)} MB`);
}

console.log('\n# fully-connected run (1024x1024) vs naive matmul on the unpacked weights');
function naive(x: Float32Array, batch: number, w: Float32Array, b: Float32Array, y: Float32Array) {
  for (let r = 0; r < batch; r++) {
    for (let n = 0; n < DIM; n++) {
      let acc = b[n] as number;
      const row = n * DIM;
      const xr = r * DIM;
      for (let i = 0; i < DIM; i++) acc += (x[xr + i] as number) * (w[row + i] as number);
      y[r * DIM + n] = acc;
    }
  }
}
const w0 = sources[0] as Float32Array;
const b0 = biases[0] as Float32Array;
for (const batch of [1, 8]) {
  const x = fill(batch * DIM, 7);
  const y = new Float32Array(batch * DIM);
  const iterations = batch === 1 ? 40 : 8;
  const time = (fn: () => void) => {
    fn();
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    return ms(start) / iterations;
  };
  const naiveMs = time(() => naive(x, batch, w0, b0, y));
  const parts = [`batch ${batch}: naive ${naiveMs.toFixed(2)} ms`];
  for (const [label, tiling] of TILINGS) {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(
      new InMemoryNamedDataMap([tensorView('w', [DIM, DIM], w0), tensorView('b', [DIM], b0)]),
    );
    const op = createFullyConnectedNcF32({
      cache,
      inputChannels: DIM,
      outputChannels: DIM,
      kernel: cache.loadUnpackedData('w'),
      bias: cache.loadUnpackedData('b'),
      tiling,
    });
    cache.finalizeForRuntime();
    const opMs = time(() => op.run(x, batch, y));
    parts.push(`${label} ${opMs.toFixed(2)} ms (${(naiveMs / opMs).toFixed(2)}x)`);
  }
  console.log(parts.join(' | '));
}
