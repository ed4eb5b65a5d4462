import { constants } from 'node:os';
import { main } from './main.js';
import { removeAllTempPaths } from './temp-paths.js';

/** How long an interrupted command may take to stop its children and remove its files. */
const UNWIND_MS = 2000;
/** How long the process listens for a signal that arrived while the command ran synchronously. */
const SIGNAL_POLL_MS = 10;

/**
 * The `memlayer` executable: main() on the real process, plus what only a process has.
 * - A closed pipe (`memlayer inspect x --json | head`) ends the command quietly (exit 0):
 *   the reader had what it wanted. Without this, Node prints an EPIPE stack.
 * - SIGINT/SIGTERM abort the command (it stops its child processes), remove every temp
 *   and partial output it was writing, then re-raise the signal so the shell sees the
 *   usual "killed by SIGINT" status. A second signal ends the process at once. Long
 *   synchronous steps (compacting, packing) finish before JavaScript sees the signal;
 *   their outputs are written to a temp path and renamed, so they are never left half-made.
 */
export async function runFromProcess(argv = process.argv.slice(2)): Promise<void> {
  const controller = new AbortController();
  const onStreamError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    controller.abort();
    removeAllTempPaths();
    process.exit(0);
  };
  process.stdout.on('error', onStreamError);
  process.stderr.on('error', onStreamError);
  let running: Promise<number> = Promise.resolve(0);
  const onSignal = (signal: NodeJS.Signals) => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    controller.abort(new Error(`interrupted by ${signal}`));
    const unwound = new Promise((done) => setTimeout(done, UNWIND_MS));
    void Promise.race([running.catch(() => 0), unwound]).then(() => {
      removeAllTempPaths();
      process.kill(process.pid, signal);
      // Still here: the signal is ignored in this process (a shell's background job inherits
      // SIGINT ignored). Exit with the status a shell gives a process killed by it.
      process.exit(128 + (constants.signals[signal] ?? 0));
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  running = main(argv, { signal: controller.signal });
  const code = await running;
  // A signal that arrived during a synchronous step is delivered once the event loop polls
  // again (a setImmediate turn was not enough in practice; a short timer is): wait for it, so
  // Ctrl-C is never swallowed by a command that went on to finish.
  await new Promise((resolve) => setTimeout(resolve, SIGNAL_POLL_MS));
  if (!controller.signal.aborted) {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.exitCode = code;
  }
}

// Run when executed (bin/memlayer.js imports this module; tests may run it through tsx).
await runFromProcess();
