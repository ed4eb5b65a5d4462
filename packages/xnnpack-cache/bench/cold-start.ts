// Cold start in file mode against a heap-only start, in fresh processes, side by side in one
// run (the ratio is what counts on a noisy machine). Each process builds `layers` fully
// connected layers of rows x cols f32 through bench/persistence-child.ts and reports the
// time from creating the cache to finalize returning (the method is runnable), plus the
// wall time of the whole process (which includes a deferred commit at exit).
// `--roots a,b` compares package trees (e.g. an older checkout of this package and its
// siblings); default: this package.
// Run: pnpm --filter @memlayer/xnnpack-cache exec tsx bench/cold-start.ts -- [--runs 5]
//   [--layers 1024] [--size 128] [--roots dirA,dirB]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    runs: { type: 'string', default: '5' },
    layers: { type: 'string', default: '1024' },
    size: { type: 'string', default: '128' },
    roots: { type: 'string' },
  },
});
const here = fileURLToPath(new URL('..', import.meta.url));
const roots = values.roots?.split(',') ?? [here];
const runs = Number(values.runs);
const layers = Number(values.layers);
const size = Number(values.size);
const tsx = createRequire(import.meta.url).resolve('tsx');
const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'xnnpack-cold-'));

interface Sample {
  initMs: number;
  /** CPU time of the same span (absent from a tree whose child does not report it). */
  initCpuMs: number;
  wallMs: number;
}

function runOnce(root: string, path: string): Sample {
  const args = { path, layers, rows: size, cols: size };
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--conditions=memlayer-source',
      '--import',
      tsx,
      join(root, 'bench', 'persistence-child.ts'),
      JSON.stringify(args),
    ],
    { cwd: root, encoding: 'utf8' },
  );
  const wallMs = performance.now() - started;
  const line = child.stdout.split('\n').find((l) => l.includes('"init"'));
  if (line === undefined) throw new Error(`child failed in ${root}: ${child.stderr}`);
  const report = JSON.parse(line) as {
    initMs: number;
    initCpuMs?: number;
    packCalls: number;
    heapBytes: number;
  };
  if (path !== '' && report.heapBytes !== 0) throw new Error(`${root}: fell back to the heap`);
  return { initMs: report.initMs, initCpuMs: report.initCpuMs ?? Number.NaN, wallMs };
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const samples = new Map<string, { heap: Sample[]; file: Sample[] }>();
for (const root of roots) samples.set(root, { heap: [], file: [] });
try {
  for (let run = 0; run < runs; run++) {
    // Interleaved, so load on the machine spreads over every variant alike.
    for (const [r, root] of roots.entries()) {
      const entry = samples.get(root) as { heap: Sample[]; file: Sample[] };
      entry.heap.push(runOnce(root, ''));
      const path = join(dir, `cold-${r}-${run}.xpwc`);
      entry.file.push(runOnce(root, path));
      rmSync(path, { force: true });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const rows = [...samples].map(([root, { heap, file }]) => {
  const heapInit = median(heap.map((s) => s.initMs));
  const fileInit = median(file.map((s) => s.initMs));
  const heapCpu = median(heap.map((s) => s.initCpuMs));
  const fileCpu = median(file.map((s) => s.initCpuMs));
  return {
    root,
    heapInitMs: Math.round(heapInit),
    fileInitMs: Math.round(fileInit),
    fileOverHeap: Math.round((fileInit / heapInit) * 100) / 100,
    heapInitCpuMs: Math.round(heapCpu),
    fileInitCpuMs: Math.round(fileCpu),
    fileOverHeapCpu: Math.round((fileCpu / heapCpu) * 100) / 100,
    heapWallMs: Math.round(median(heap.map((s) => s.wallMs))),
    fileWallMs: Math.round(median(file.map((s) => s.wallMs))),
  };
});
console.log(JSON.stringify({ layers, size, runs, rows }, null, 2));
