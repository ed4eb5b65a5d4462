// Long fuzz run of the XPWC decoders.
//   pnpm --filter @memlayer/cache-format fuzz -- --runs 1000000 [--seed 123] [--max-failures 20]
// Every case mutates a valid sample (or makes random bytes) and calls every decoding entry
// point; anything thrown that is not an XpwcFormatError is a failure. Exits 1 on any failure.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { readTrailer, XpwcFormatError } from '../src/index.js';
import { buildCorpus, fuzzOne, hex, MUTATIONS, mutate, Rng } from '../test/support/fuzz-kit.js';

// `pnpm run fuzz -- --runs N` may pass the `--` through; parseArgs would then treat the options
// after it as positionals.
const argv = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
const { values } = parseArgs({
  args: argv,
  options: {
    runs: { type: 'string', default: '100000' },
    seed: { type: 'string' },
    'max-failures': { type: 'string', default: '20' },
    quiet: { type: 'boolean', default: false },
  },
  strict: true,
  allowPositionals: false,
});

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return n;
}

const runs = positiveInt('runs', values.runs);
const seed =
  values.seed === undefined
    ? (Date.now() ^ (process.pid << 8)) >>> 0
    : positiveInt('seed', values.seed);
const maxFailures = positiveInt('max-failures', values['max-failures']);

const corpus = buildCorpus();
const rng = new Rng(seed);
const byKind = new Map<string, { cases: number; ok: number }>();
const byCode = new Map<string, number>();
let failures = 0;
let slowest = 0;
let slowestKind = '';
const started = performance.now();
let lastReport = started;

console.log(`xpwc fuzz: ${runs} cases, seed ${seed}, corpus of ${corpus.length} samples`);
for (let i = 0; i < runs; i++) {
  const kind = rng.pick(MUTATIONS);
  const sample = rng.pick(corpus);
  const bytes = mutate(sample, rng, kind);
  const t0 = performance.now();
  const escapes = fuzzOne(bytes);
  const dt = performance.now() - t0;
  if (dt > slowest) {
    slowest = dt;
    slowestKind = `${kind} of ${sample.label}, ${bytes.length} bytes`;
  }
  const stats = byKind.get(kind) ?? { cases: 0, ok: 0 };
  stats.cases++;
  // Outcome of the main entry point, for the summary.
  try {
    readTrailer(bytes, bytes.length);
    stats.ok++;
    byCode.set('ok', (byCode.get('ok') ?? 0) + 1);
  } catch (e) {
    const code = e instanceof XpwcFormatError ? e.code : 'escaped';
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
  }
  byKind.set(kind, stats);
  if (escapes.length > 0) {
    failures++;
    if (failures <= maxFailures) {
      console.error(`FAILURE in case ${i} (${kind} of ${sample.label}, ${bytes.length} bytes)`);
      for (const e of escapes) {
        console.error(
          `  ${e.call}: ${e.error instanceof Error ? (e.error.stack ?? e.error.message) : String(e.error)}`,
        );
      }
      console.error(`  bytes (tail, hex): ${hex(bytes)}`);
    }
  }
  const now = performance.now();
  if (!values.quiet && now - lastReport > 5000) {
    lastReport = now;
    console.log(
      `  ${i + 1}/${runs} cases, ${failures} failures, ${((i + 1) / ((now - started) / 1000)).toFixed(0)} cases/s`,
    );
  }
}
const seconds = (performance.now() - started) / 1000;

console.log(`cases run: ${runs}`);
console.log(`failures (non-XpwcFormatError escaped): ${failures}`);
console.log(
  `time: ${seconds.toFixed(1)} s (${(runs / seconds).toFixed(0)} cases/s), slowest case ${slowest.toFixed(2)} ms (${slowestKind})`,
);
console.log('per mutation (cases / decoded fine):');
for (const [kind, s] of [...byKind].sort())
  console.log(`  ${kind.padEnd(14)} ${s.cases} / ${s.ok}`);
console.log('readTrailer outcomes:');
for (const [code, n] of [...byCode].sort((a, b) => b[1] - a[1]))
  console.log(`  ${code.padEnd(30)} ${n}`);
if (failures > 0) {
  console.error(`FAIL: ${failures} case(s) let a non-XpwcFormatError escape (seed ${seed})`);
  process.exit(1);
}
