// One start of a program in a fresh process: load + loadMethod through a cache file, timed
// in-process; prints one JSON line with the times and what loading the weights cost.
import { packingStats } from '@memlayer/xnnpack-cache';
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  weightFileStats,
} from '../src/index.js';

const [programPath, cachePath] = process.argv.slice(2) as [string, string];
const started = performance.now();
const module = new Module(programPath, { registry: createDefaultRegistry() });
module.load(
  new LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new BackendOptions().setOption('packed_cache_path', cachePath),
  ),
);
const loaded = performance.now();
module.loadMethod('forward');
const ready = performance.now();
process.stdout.write(
  `${JSON.stringify({
    loadMs: loaded - started,
    startMs: ready - started,
    packs: packingStats().calls,
    stats: weightFileStats(),
  })}\n`,
);
module.dispose();
