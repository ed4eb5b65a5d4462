// One warm start in this process, for instruction counts (valgrind) and timings:
//   node bench/warm-once.mjs <program.json> <cache file> [starts]
// Runs new Module + load + loadMethod('forward') with packed_cache_path set and prints the
// in-process milliseconds. With `starts` > 1 it runs that many warm starts one after the
// other, each with its own cache manager and Module (disposed after), and prints each: the
// first pays for running our code for the first time in the process, the later ones not.
// Imports the built packages (run `pnpm --filter @memlayer/module-loader build`).
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
} from '@memlayer/module-loader';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';

const [program, cachePath, startsArg = '1'] = process.argv.slice(2);
const starts = Number(startsArg);
if (program === undefined || cachePath === undefined || !(Number.isInteger(starts) && starts > 0)) {
  console.error('usage: node bench/warm-once.mjs <program.json> <cache file> [starts]');
  process.exit(2);
}
for (let start = 0; start < starts; start++) {
  const started = performance.now();
  const registry = createDefaultRegistry({ xnnpack: { caches: new XNNWeightsCacheManager() } });
  const module = new Module(program, { registry });
  const options = new BackendOptions().setOption('packed_cache_path', cachePath);
  module.load(new LoadBackendOptionsMap().setOptions('XnnpackBackend', options));
  module.loadMethod('forward');
  const ms = performance.now() - started;
  const handle = module.methodHandle('forward');
  console.log(JSON.stringify({ ms: Number(ms.toFixed(1)), cacheHits: handle.cacheHits }));
  module.dispose();
}
