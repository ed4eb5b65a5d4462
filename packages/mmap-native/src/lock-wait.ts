// A bounded wait for flock: flock(2) itself can only block forever or not at all, so a
// timeout polls the non-blocking form, sleeping briefly between attempts.
import { MmapError } from './errors.js';

// Atomics.wait on a private SharedArrayBuffer is a plain sleep that works on the main
// thread too (nobody ever notifies it).
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

// Short first pauses keep a lock that frees up quickly cheap to get; later ones save CPU.
const FIRST_PAUSE_MS = 1;
const MAX_PAUSE_MS = 20;

/**
 * Calls tryOnce() until it returns true or timeoutMs have passed, then throws MmapError
 * 'ERR_MMAP_LOCK_TIMEOUT'. tryOnce is always called at least once.
 */
export function waitForLock(
  tryOnce: () => boolean,
  timeoutMs: number,
  what: string,
  path: string,
): void {
  // The uncontended case reads no clock: `performance` loads perf_hooks on first use.
  if (tryOnce()) return;
  const deadline = performance.now() + timeoutMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) {
      throw new MmapError(`could not get ${what} lock on '${path}' within ${timeoutMs} ms`, {
        code: 'ERR_MMAP_LOCK_TIMEOUT',
        syscall: 'flock',
        path,
      });
    }
    sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
    if (tryOnce()) return;
  }
}
