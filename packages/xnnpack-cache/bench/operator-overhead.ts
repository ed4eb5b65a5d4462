// Per-layer cost of creating fully-connected operators through a heap cache: 1024 layers,
// a cold build (reserve, zero-fill, pack, insert into a fresh cache) and a hot build (a
// second runtime on a cache that holds every entry: all hits). 128x128 layers show the
// packing path; 8x8 layers, whose bytes cost next to nothing, show the per-layer overhead.
// Prints CPU microseconds per layer (medians and minimums of interleaved rounds: on a shared
// machine other work only adds time, so the minimum is the least disturbed round); asserts
// nothing. Tensor names are hex SHA-256 digests, like the module loader's content names.
//
// Run: npx tsx --conditions=memlayer-source bench/operator-overhead.ts [other/src/index.ts ...]
// Extra arguments are other source trees of this package, measured in the same process with
// rounds interleaved, e.g. the code before a change:
//   git archive <commit> packages/xnnpack-cache/src | tar -x -C /tmp/before
//   ln -s $PWD/node_modules /tmp/before/packages/xnnpack-cache/node_modules
//   npx tsx --conditions=memlayer-source bench/operator-overhead.ts \
//     /tmp/before/packages/xnnpack-cache/src/index.ts
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { fill } from './fill.js';

type Lib = typeof import('../src/index.js');

const LAYERS = 1024;
const ROUNDS = 15;

const here = new URL('../src/index.ts', import.meta.url).pathname;
const sources = [here, ...process.argv.slice(2)];
const libs: Lib[] = [];
for (const source of sources) libs.push((await import(pathToFileURL(source).href)) as Lib);

// Names as the module loader gives them: the hex SHA-256 of a tensor (here of its tag and
// layer index), made once (a manifest's strings), so the bench measures look-ups, not
// string building. Digests differ from their first characters on, as users' names do:
// counters padded with zeros would share long prefixes and make every string compare slow.
const digest = (i: number, tag: string) => createHash('sha256').update(`${tag}${i}`).digest('hex');
const KERNELS = Array.from({ length: LAYERS }, (_, i) => digest(i, 'kernel'));
const BIASES = Array.from({ length: LAYERS }, (_, i) => digest(i, 'bias'));

function modelFor(lib: Lib, dim: number) {
  const map = new lib.InMemoryNamedDataMap();
  for (let layer = 0; layer < LAYERS; layer++) {
    map.set(lib.tensorView(KERNELS[layer] as string, [dim, dim], fill(dim * dim, layer + 1)));
    map.set(lib.tensorView(BIASES[layer] as string, [dim], fill(dim, layer + 7)));
  }
  return map;
}

function createAll(lib: Lib, cache: InstanceType<Lib['XNNWeightsCache']>, dim: number) {
  for (let layer = 0; layer < LAYERS; layer++) {
    lib.createFullyConnectedNcF32({
      cache,
      inputChannels: dim,
      outputChannels: dim,
      kernel: cache.loadUnpackedData(KERNELS[layer] as string),
      bias: cache.loadUnpackedData(BIASES[layer] as string),
    });
  }
}

/**
 * One build; CPU µs per layer (process.cpuUsage: this machine is shared, and CPU time is
 * not inflated by waiting for a core the way wall time is). The cache drops the build's
 * references afterwards.
 */
function build(
  lib: Lib,
  cache: InstanceType<Lib['XNNWeightsCache']>,
  map: InstanceType<Lib['InMemoryNamedDataMap']>,
  dim: number,
): number {
  const start = process.cpuUsage();
  cache.initializeForRuntime(map);
  createAll(lib, cache, dim);
  const names = cache.finalizeForRuntime();
  const used = process.cpuUsage(start);
  const us = (used.user + used.system) / LAYERS;
  cache.deletePackedData(names);
  return us;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

for (const dim of [128, 8]) {
  const setups = libs.map((lib) => {
    const map = modelFor(lib, dim);
    // A cache holding every entry (one reference kept), for the hot builds.
    const warm = new lib.XNNWeightsCache();
    warm.initializeForRuntime(map);
    createAll(lib, warm, dim);
    warm.finalizeForRuntime();
    return { lib, map, warm, cold: [] as number[], hot: [] as number[] };
  });
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of setups) {
      s.cold.push(build(s.lib, new s.lib.XNNWeightsCache(), s.map, dim));
      s.hot.push(build(s.lib, s.warm, s.map, dim));
    }
  }
  console.log(`\n# ${LAYERS} layers of ${dim}x${dim} f32, heap cache, CPU µs per layer`);
  setups.forEach((s, i) => {
    console.log(
      `${(sources[i] as string).padEnd(56)} cold ${median(s.cold).toFixed(2).padStart(7)} (min ${Math.min(...s.cold).toFixed(2)})  hot ${median(s.hot).toFixed(2).padStart(6)} (min ${Math.min(...s.hot).toFixed(2)})`,
    );
  });
}
