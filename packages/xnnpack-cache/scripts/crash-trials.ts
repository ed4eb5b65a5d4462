// SIGKILL crash trials against a cache file: a child packs and commits build
// after build and is killed at a random moment; each next load must be the last or the
// in-flight commit with every data CRC valid, or a clean start, and never give wrong
// outputs. Usage: pnpm --filter @memlayer/xnnpack-cache crash-trials -- --trials 100
//   [--backend posix|heap] [--max-delay-ms 300] [--seed N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type CrashOutcome, crashTrial } from '../test/crash-trial.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    trials: { type: 'string', default: '100' },
    backend: { type: 'string', default: 'posix' },
    'max-delay-ms': { type: 'string', default: '300' },
    seed: { type: 'string' },
  },
});
const trials = Number(values.trials);
const maxDelay = Number(values['max-delay-ms']);
const backend = values.backend === 'heap' ? 'heap' : 'posix';
let seed = values.seed === undefined ? Date.now() >>> 0 : Number(values.seed) >>> 0;
const initialSeed = seed;
const random = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 0x1_0000_0000;
};

/** Trials per file: the file accumulates commits, dead tails and torn trailers, then a new one starts. */
const TRIALS_PER_FILE = 10;
const dir = mkdtempSync(join(tmpdir(), 'xnnpack-crash-'));
const counts: Record<CrashOutcome, number> = {
  'last-commit': 0,
  'in-flight-commit': 0,
  'nothing-committed': 0,
  completed: 0,
};
const failures: string[] = [];
const started = performance.now();
try {
  for (let trial = 0; trial < trials; trial++) {
    const path = join(dir, `crash-${Math.floor(trial / TRIALS_PER_FILE)}.xpwc`);
    const delay = Math.floor(random() * maxDelay);
    const result = await crashTrial(path, trial % TRIALS_PER_FILE, delay, backend);
    counts[result.outcome]++;
    for (const failure of result.failures)
      failures.push(`trial ${trial} (kill after ${delay} ms): ${failure}`);
    if ((trial + 1) % 10 === 0) {
      process.stdout.write(`  ${trial + 1}/${trials} trials, ${failures.length} failures\n`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify(
    {
      trials,
      backend,
      seed: initialSeed,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      outcomes: counts,
      failures: failures.length,
    },
    null,
    2,
  ),
);
for (const failure of failures) console.error(failure);
process.exitCode = failures.length === 0 ? 0 : 1;
