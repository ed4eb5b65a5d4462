// The GEMM kernels' own thread pool in a fresh process: started only when work is split,
// one per environment (worker_threads too), joined at a worker's end, and never keeping a
// process alive.
import { describe, expect, it } from 'vitest';
import { lastJson, runNodeFixture } from './helpers.js';

describe('GEMM thread pool', () => {
  it('starts on the first split, serves workers, and lets every environment end', async () => {
    // A pool that kept the process alive would hang it: runNodeFixture then kills it, and
    // the exit code below is not 0.
    const result = await runNodeFixture('gemm-threads.ts');
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(lastJson(result)).toEqual({
      singleMatches: true,
      splitEqualsSingle: true,
      // threads: 1, and small work with threads: 4, start no thread.
      poolThreadsBefore: 0,
      // threads: 3 starts two helpers; threads: 2 later reuses one of them.
      poolThreads: 2,
      // Each worker's pool was joined with the worker.
      threadsLeftByWorkers: 0,
      workers: [
        { ok: true, exitCode: 0 },
        { ok: true, exitCode: 0 },
        { ok: true, exitCode: 0 },
      ],
    });
  });
});
