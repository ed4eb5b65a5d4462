// Warm start with and without the weight-source record, and hashing speed.
// Run: cd packages/module-loader && node --conditions=memlayer-source --import tsx bench/warm-start.ts
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSafetensors, type F32TensorInput } from '../src/index.js';

const CHILD = join(import.meta.dirname, 'warm-start-child.ts');
const REPEATS = 5;

function writeProgram(dir: string, layers: number, size: number): string {
  const tensors: F32TensorInput[] = [];
  const graph: unknown[] = [];
  for (let i = 0; i < layers; i++) {
    const data = new Float32Array(size * size).map((_, k) => Math.sin(i * 7919 + k));
    tensors.push({ name: `l${i}.weight`, shape: [size, size], data });
    graph.push({
      op: 'linear',
      input: i === 0 ? 'x' : `h${i - 1}`,
      output: `h${i}`,
      weight: `l${i}.weight`,
    });
  }
  writeFileSync(join(dir, 'model.safetensors'), encodeSafetensors(tensors));
  const past = new Date(Date.now() - 60_000);
  utimesSync(join(dir, 'model.safetensors'), past, past);
  const manifest = {
    format: 'memlayer-program',
    version: 1,
    weights: ['model.safetensors'],
    methods: {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: size }],
        graph,
        outputs: [`h${layers - 1}`],
      },
    },
  };
  writeFileSync(join(dir, 'program.json'), JSON.stringify(manifest));
  return join(dir, 'program.json');
}

interface Start {
  loadMs: number;
  startMs: number;
  packs: number;
  stats: { headersParsed: number; bytesHashed: number; filesOpened: number };
}

function start(program: string, cache: string): Start {
  const result = spawnSync(
    process.execPath,
    ['--conditions=memlayer-source', '--import', 'tsx', CHILD, program, cache],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..') },
  );
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as Start;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[values.length >> 1] as number;

const buffer = new Uint8Array(256 * 1024 * 1024).fill(7);
const hashStart = performance.now();
createHash('sha256').update(buffer).digest('hex');
const hashMs = performance.now() - hashStart;
console.log(
  `sha256 (node:crypto): ${(buffer.byteLength / 1e9 / (hashMs / 1e3)).toFixed(2)} GB/s over 256 MiB`,
);

for (const [layers, size] of [
  [1024, 128],
  [4096, 64],
] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-warm-bench-'));
  try {
    const program = writeProgram(dir, layers, size);
    const cache = join(dir, 'cache.xpwc');
    const cold = start(program, cache);
    const withRecord: Start[] = [];
    const withoutRecord: Start[] = [];
    for (let i = 0; i < REPEATS; i++) {
      withRecord.push(start(program, cache));
      rmSync(`${cache}.sources.json`);
      withoutRecord.push(start(program, cache));
    }
    const line = (name: string, runs: Start[]) =>
      `  ${name}: start ${median(runs.map((r) => r.startMs)).toFixed(1)} ms (load ${median(runs.map((r) => r.loadMs)).toFixed(2)} ms), packs ${runs[0]?.packs}, headers ${runs[0]?.stats.headersParsed}, hashed ${runs[0]?.stats.bytesHashed} B, files opened ${runs[0]?.stats.filesOpened}`;
    console.log(
      `${layers} x ${size}^2 f32 (${((layers * size * size * 4) / 2 ** 20).toFixed(0)} MiB), medians of ${REPEATS} fresh processes`,
    );
    console.log(line('cold', [cold]));
    console.log(line('warm, record', withRecord));
    console.log(line('warm, no record', withoutRecord));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
