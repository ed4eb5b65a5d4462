// File-backed persistence figures: cold vs warm init, warm init against bytes
// and entry count, dirty memory after finalize, and PSS of processes sharing one cache.
// Prints numbers; asserts nothing. Every measured run is a fresh child process.
// Run: pnpm --filter @memlayer/xnnpack-cache bench:persistence [-- --quick]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CacheMemoryStats } from '../src/index.js';
import type { PersistenceChildArgs } from './persistence-child.js';

const quick = process.argv.includes('--quick');
const childScript = fileURLToPath(new URL('./persistence-child.ts', import.meta.url));
// Set MEMLAYER_BENCH_DIR to a folder on a real disk if os.tmpdir() is a tmpfs: the
// figures are about page-cache pages backed by a file.
const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'xnnpack-bench-'));
const MB = 1 << 20;

interface InitReport {
  initMs: number;
  /** The deferred commit, run by flush() right after init (not part of initMs). */
  commitMs?: number;
  packCalls: number;
  packedBytes: number;
  fileBytes: number;
  heapBytes: number;
  memory: CacheMemoryStats;
  privateDirtyDelta: number;
  pss: number;
}

interface Child {
  pid: number;
  init: Promise<InitReport>;
  ready: Promise<void>;
  finish: () => Promise<void>;
}

function start(args: PersistenceChildArgs): Child {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--conditions=memlayer-source',
      '--import',
      'tsx',
      childScript,
      JSON.stringify(args),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let resolveInit: (r: InitReport) => void = () => undefined;
  let resolveReady: () => void = () => undefined;
  const init = new Promise<InitReport>((r) => {
    resolveInit = r;
  });
  const ready = new Promise<void>((r) => {
    resolveReady = r;
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`child exited ${code}`)),
    );
  });
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const event = JSON.parse(buffered.slice(0, nl)) as { event: string };
      buffered = buffered.slice(nl + 1);
      if (event.event === 'init') resolveInit(event as unknown as InitReport);
      if (event.event === 'ready') resolveReady();
    }
  });
  return {
    pid: child.pid ?? -1,
    init,
    ready,
    finish: () => {
      child.stdin.end();
      return exited;
    },
  };
}

async function once(args: PersistenceChildArgs): Promise<InitReport> {
  const child = start(args);
  const report = await child.init;
  await child.finish();
  return report;
}

function pssOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024;
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const msText = (ms: number) => `${ms.toFixed(0)} ms`;

async function main(): Promise<void> {
  const model = quick
    ? { layers: 32, rows: 512, cols: 512 } // 32 MB
    : { layers: 128, rows: 1024, cols: 1024 }; // 512 MB
  const modelPath = join(dir, 'model.xpwc');
  const modelBytes = model.layers * model.rows * model.cols * 4;
  console.log(
    `model: ${model.layers} layers of ${model.rows}x${model.cols} f32 = ${mb(modelBytes)}`,
  );

  // 1. Cold vs warm init, each in a fresh process.
  const heap = await once({ path: '', ...model });
  const cold = await once({ path: modelPath, ...model });
  const warm = await once({ path: modelPath, ...model });
  console.log('\n## init time (fresh process each)');
  console.log(`heap only (pack)          ${msText(heap.initMs)}`);
  console.log(
    `file, cold (pack)         ${msText(cold.initMs)}  packs=${cold.packCalls} file=${mb(cold.fileBytes)}, then the deferred commit ${msText(cold.commitMs ?? 0)}`,
  );
  console.log(`file, warm (load)         ${msText(warm.initMs)}  packs=${warm.packCalls}`);
  console.log(`cold / warm               ${(cold.initMs / warm.initMs).toFixed(1)}x`);

  // 2. Dirty memory of packed weights after finalize.
  console.log('\n## memory after finalize (smaps)');
  console.log(
    `file mode: mappings dirty=${mb(cold.memory.dirtyBytes)} clean=${mb(cold.memory.cleanBytes)} ` +
      `(private dirty ${mb(cold.memory.privateDirty)}); process Private_Dirty delta ${mb(cold.privateDirtyDelta)}`,
  );
  console.log(
    `heap mode: packed bytes on heap=${mb(heap.heapBytes)}; process Private_Dirty delta ${mb(heap.privateDirtyDelta)}`,
  );

  // 3. Does warm init grow with bytes or with entries?
  console.log('\n## warm init vs bytes and entries');
  const shapes = quick
    ? [
        { name: '8 MB, 32 entries', layers: 32, rows: 64, cols: 1024 },
        { name: '128 MB, 32 entries', layers: 32, rows: 1024, cols: 1024 },
        { name: '128 MB, 512 entries', layers: 512, rows: 64, cols: 1024 },
      ]
    : [
        { name: '64 MB, 64 entries', layers: 64, rows: 256, cols: 1024 },
        { name: '1 GB, 64 entries', layers: 64, rows: 4096, cols: 1024 },
        { name: '1 GB, 1024 entries', layers: 1024, rows: 256, cols: 1024 },
      ];
  for (const shape of shapes) {
    const path = join(dir, `scale-${shape.layers}-${shape.rows}.xpwc`);
    const args = { path, layers: shape.layers, rows: shape.rows, cols: shape.cols };
    const coldScale = await once(args);
    const warmRuns = [await once(args), await once(args)];
    const best = Math.min(...warmRuns.map((r) => r.initMs));
    console.log(
      `${shape.name.padEnd(20)} warm ${msText(best).padStart(8)}  (cold ${msText(coldScale.initMs)}, file ${mb(coldScale.fileBytes)})`,
    );
    rmSync(path, { force: true });
  }

  // 4. PSS of 4 processes sharing one cache file vs 4 heap-only processes.
  console.log('\n## total PSS of 4 processes holding the model');
  for (const [label, path] of [
    ['shared cache file', modelPath],
    ['heap only', ''],
  ] as const) {
    const children = Array.from({ length: 4 }, () => start({ path, ...model, hold: true }));
    await Promise.all(children.map((c) => c.ready));
    const pss = children.map((c) => pssOf(c.pid));
    console.log(
      `${label.padEnd(18)} total ${mb(pss.reduce((a, b) => a + b, 0))}  (each: ${pss.map(mb).join(', ')})`,
    );
    await Promise.all(children.map((c) => c.finish()));
  }
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
