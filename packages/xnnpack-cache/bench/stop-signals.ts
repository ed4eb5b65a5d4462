// How often a server stopped by a default signal keeps its commit: a child packs a model
// into a fresh cache file, finalizes, prints `ready`, then idles (or is busy in synchronous
// work for --busy ms) and is sent each signal at each delay after `ready`. Prints, per row,
// how many of the trials left the whole model committed. Prints numbers; asserts nothing.
// Run: npx tsx --conditions=memlayer-source bench/stop-signals.ts [--signals SIGTERM,SIGINT,SIGHUP]
//   [--delays 0,100] [--busy 0] [--trials 6] [--layers 8]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { packageDir, startChild, TS_NODE_FLAGS } from '../test/child.js';
import type { LifecycleChildArgs } from '../test/fixtures/lifecycle-child.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};
const signals = arg('signals', 'SIGTERM,SIGINT,SIGHUP').split(',') as NodeJS.Signals[];
const delays = arg('delays', '0,100').split(',').map(Number);
const busyMs = Number(arg('busy', '0'));
const trials = Number(arg('trials', '6'));
// 512 x 256 float layers: two per MiB packed.
const layers = Number(arg('layers', '8'));
const childScript = join(packageDir, 'test', 'fixtures', 'lifecycle-child.ts');
const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'stop-signals-'));

function committedEntries(path: string): number {
  try {
    const bytes = new Uint8Array(readFileSync(path));
    return readTrailer(bytes, bytes.byteLength).trailer.entries.length;
  } catch {
    return 0;
  }
}

console.log(`${layers / 2} MiB packed, busy ${busyMs} ms after ready, ${trials} trials per row`);
for (const signal of signals) {
  for (const delay of delays) {
    let committed = 0;
    for (let trial = 0; trial < trials; trial++) {
      const path = join(dir, `${signal}-${delay}-${trial}.xpwc`);
      const args: LifecycleChildArgs = {
        path,
        layers,
        inputChannels: 512,
        outputChannels: 256,
        busyMs,
      };
      const child = startChild(
        process.execPath,
        [...TS_NODE_FLAGS, childScript, JSON.stringify(args)],
        { timeoutMs: 120_000 },
      );
      await child.waitFor('ready');
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      child.child.kill(signal);
      await child.done;
      if (committedEntries(path) === layers) committed++;
      rmSync(path, { force: true });
    }
    console.log(`${signal} ${delay} ms after ready: committed ${committed}/${trials}`);
  }
}
rmSync(dir, { recursive: true, force: true });
