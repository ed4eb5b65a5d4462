// memlayer against onnxruntime-node on the same MLP, in fresh processes interleaved per
// round. Prints a table of medians and ratios; asserts nothing.
//   node packages/bench/dist/versus-ort.js [--layers 1024] [--dim 128] [--rounds 7] [--dir d]
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareVersusFiles } from './versus-ort/files.js';
import { measureVersusOrt } from './versus-ort/measure-versus.js';
import { versusTable } from './versus-ort/table.js';
import { probeThreadsOption } from './versus-ort/threads-option.js';

const { values } = parseArgs({
  options: {
    layers: { type: 'string', default: '1024' },
    dim: { type: 'string', default: '128' },
    rounds: { type: 'string', default: '7' },
    batch: { type: 'string', default: '64' },
    processes: { type: 'string', default: '4' },
    dir: { type: 'string' },
  },
});
const layers = Number(values.layers);
const dim = Number(values.dim);
const spec = { label: `${layers}x${dim}`, layers, dim };
const dir = values.dir ?? join(process.cwd(), `.bench-versus-ort-${layers}x${dim}`);
mkdirSync(dir, { recursive: true });
const progress = (message: string) => void process.stderr.write(`… ${message}\n`);
const files = await prepareVersusFiles(dir, spec, progress);
const [loadBefore] = loadavg();
const results = await measureVersusOrt({
  spec,
  rounds: Number(values.rounds),
  files,
  threads: probeThreadsOption(files.probeProgram),
  steadyBudgetMs: 1000,
  batch: Number(values.batch),
  processes: Number(values.processes),
  progress,
});
const [loadAfter] = loadavg();
process.stdout.write(versusTable(results));
process.stdout.write(
  `Load average (1 min): ${loadBefore?.toFixed(2)} before, ${loadAfter?.toFixed(2)} after; files in ${dir}.\n`,
);
