// When the deferred commit is durable: finalize starts it, one thread-pool task syncs the
// data, writes the trailer and the commit slot (each synced) and releases the lock. Prints,
// per model size, how long finalize took and how long after it returned the commit was
// complete (the window in which a default SIGTERM loses it), against commit: 'finalize'.
// Prints numbers; asserts nothing.
// Run: npx tsx --conditions=memlayer-source bench/commit-latency.ts [--runs 5] [--mib 4,16,64]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStorage, XNNWeightsCache } from '../src/index.js';
import { buildModel, range } from '../test/fixtures/model.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};
const runs = Number(arg('runs', '5'));
const sizesMiB = arg('mib', '4,16,64').split(',').map(Number);
// A 512 x 256 f32 layer packs to 516 KiB: about two layers per MiB.
const LAYER = { inputChannels: 512, outputChannels: 256 } as const;
const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'commit-latency-'));

function run(mib: number, commit: 'deferred' | 'finalize', trial: number) {
  const path = join(dir, `${commit}-${mib}-${trial}.xpwc`);
  const storage = new FileStorage({ path, commit });
  const cache = new XNNWeightsCache({ storage });
  const started = performance.now();
  buildModel(cache, { ...LAYER, layers: range(0, mib * 2) });
  const finalized = performance.now();
  // info() looks at the task without waiting for it.
  while (storage.info().pendingCommit) {
    // spin: no turn of the event loop, as in a process busy after finalize
  }
  const committed = performance.now();
  cache.close();
  rmSync(path);
  return { buildMs: finalized - started, afterMs: committed - finalized };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;
const fmt = (values: number[]) =>
  `median ${median(values).toFixed(1)} max ${Math.max(...values).toFixed(1)}`;

console.log(`commit latency, ${runs} runs per row, files in ${dir}`);
for (const mib of sizesMiB) {
  const deferred = range(0, runs).map((t) => run(mib, 'deferred', t));
  const atFinalize = range(0, runs).map((t) => run(mib, 'finalize', t));
  console.log(
    `${String(mib).padStart(3)} MiB  deferred: build ${fmt(deferred.map((r) => r.buildMs))} ms, ` +
      `durable ${fmt(deferred.map((r) => r.afterMs))} ms after finalize returned | ` +
      `commit at finalize: build ${fmt(atFinalize.map((r) => r.buildMs))} ms`,
  );
}
rmSync(dir, { recursive: true, force: true });
