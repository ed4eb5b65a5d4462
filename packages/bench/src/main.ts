// Entry of `pnpm bench` / `pnpm bench:quick` (root scripts): node packages/bench/dist/main.js
import { rmSync } from 'node:fs';
import { benchMain } from './cli.js';

let scratch: string | null = null;
// An interrupted run removes its scratch folder (models and cache files of up to a few GiB).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
    // The handler ran once and is gone: re-raised, the signal ends the process as usual.
    process.kill(process.pid, signal);
  });
}

process.exitCode = await benchMain(process.argv.slice(2), {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTTY: process.stderr.isTTY === true,
  env: process.env,
  cwd: process.cwd(),
  trackScratch: (dir) => {
    scratch = dir;
  },
});
