// One warm start in this process, for instruction counts (valgrind) and timings:
//   node bench/warm-once.mjs <program.json> <cache file>
// Runs new Module + load + loadMethod('forward') with packed_cache_path set and prints the
// in-process milliseconds. Imports the built packages (run `npx tsc -p tsconfig.build.json`).
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
} from '@memlayer/module-loader';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';

const [program, cachePath] = process.argv.slice(2);
if (program === undefined || cachePath === undefined) {
  console.error('usage: node bench/warm-once.mjs <program.json> <cache file>');
  process.exit(2);
}
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
