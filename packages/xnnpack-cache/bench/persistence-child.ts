// One measured process for bench/persistence.ts: builds a model of `layers` fully-connected
// layers (rows x cols f32) through a cache ('' = heap only) and prints one JSON line.
// With `hold`, it then prints {"event":"ready"} and keeps its memory until stdin closes.
import { readFileSync } from 'node:fs';
import {
  createFullyConnectedNcF32,
  InMemoryNamedDataMap,
  packingStats,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';

export interface PersistenceChildArgs {
  readonly path: string;
  readonly layers: number;
  readonly rows: number;
  readonly cols: number;
  readonly hold?: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as PersistenceChildArgs;
/** Distinct unpacked sources, cycled over layers: keeps unpacked memory small. */
const DISTINCT_SOURCES = 4;

function rollup(): { pss: number; rss: number; privateDirty: number } {
  const out = { pss: 0, rss: 0, privateDirty: 0 };
  try {
    const text = readFileSync('/proc/self/smaps_rollup', 'utf8');
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    out.pss = field('Pss');
    out.rss = field('Rss');
    out.privateDirty = field('Private_Dirty');
  } catch {
    // not Linux
  }
  return out;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const sources = Array.from({ length: DISTINCT_SOURCES }, (_, s) => {
  const data = new Float32Array(args.rows * args.cols);
  // Cheap deterministic fill: packing cost does not depend on the values.
  for (let i = 0; i < 4096 && i < data.length; i++)
    data[i] = ((i * 2654435761 + s) % 1000) / 1000 - 0.5;
  for (let filled = Math.min(4096, data.length); filled < data.length; filled *= 2) {
    data.copyWithin(filled, 0, Math.min(filled, data.length - filled));
  }
  return data;
});
const bias = new Float32Array(args.rows).fill(0.25);
const views = [];
for (let l = 0; l < args.layers; l++) {
  views.push(
    tensorView(`l${l}.w`, [args.rows, args.cols], sources[l % DISTINCT_SOURCES] as Float32Array),
  );
  views.push(tensorView(`l${l}.b`, [args.rows], bias));
}
const weights = new InMemoryNamedDataMap(views);
gc();
const before = rollup();

const start = process.hrtime.bigint();
const startCpu = process.cpuUsage();
const cache = new XNNWeightsCache({ path: args.path });
cache.initializeForRuntime(weights);
const ops = [];
for (let l = 0; l < args.layers; l++) {
  ops.push(
    createFullyConnectedNcF32({
      cache,
      inputChannels: args.cols,
      outputChannels: args.rows,
      kernel: cache.loadUnpackedData(`l${l}.w`),
      bias: cache.loadUnpackedData(`l${l}.b`),
    }),
  );
}
cache.finalizeForRuntime();
const initMs = Number(process.hrtime.bigint() - start) / 1e6;
// CPU time (user + system, page faults included) is less noisy than wall time on a busy machine.
const initCpu = process.cpuUsage(startCpu);
const initCpuMs = (initCpu.user + initCpu.system) / 1e3;
// The commit is deferred off the critical path; figures below are after it.
const flushStart = process.hrtime.bigint();
cache.storage.flush?.();
const commitMs = Number(process.hrtime.bigint() - flushStart) / 1e6;

gc();
const after = rollup();
const stats = cache.stats();
process.stdout.write(
  `${JSON.stringify({
    event: 'init',
    initMs,
    initCpuMs,
    commitMs,
    packCalls: packingStats().calls,
    packedBytes: stats.packedBytes,
    fileBytes: stats.fileBytes,
    heapBytes: stats.heapBytes,
    memory: cache.memoryStats(),
    privateDirtyDelta: after.privateDirty - before.privateDirty,
    pss: after.pss,
  })}\n`,
);
if (args.hold) {
  // Touch every packed page once, as inference would, then hold.
  const x = new Float32Array(args.cols).fill(1);
  for (const op of ops) op.run(x, 1);
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    cache.close();
    process.exit(0);
  });
}
