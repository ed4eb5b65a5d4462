// The disk budget holds at every moment, not only at close: six processes pack into one
// cache file with maxFileBytes = 1 MiB while the test samples the file's size and its
// allocated blocks.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reportOf, startCacheChild } from './child.js';
import { makeTempDir, referenceHashes } from './file-helpers.js';
import { range } from './fixtures/model.js';

// 16 layers of ~25 KiB packed per process, 6 processes: 2.6 MiB wanted, 1 MiB allowed.
const MODEL = { inputChannels: 96, outputChannels: 64 } as const;
const PROCESSES = 6;
const LAYERS_EACH = 16;
const BUDGET = 1 << 20;

describe('a disk budget shared by processes', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('never lets the file grow past maxFileBytes while processes run', async () => {
    const path = join(dir, 'budget.xpwc');
    const signal = join(dir, 'go');
    const sets = range(0, PROCESSES).map((p) => range(p * LAYERS_EACH, LAYERS_EACH));
    const running = sets.map((layers) =>
      startCacheChild(
        {
          ...MODEL,
          path,
          startSignal: signal,
          builds: [layers.slice(0, LAYERS_EACH / 2), layers.slice(LAYERS_EACH / 2)],
          flushBuilds: [],
          options: { maxFileBytes: BUDGET },
        },
        { timeoutMs: 120_000 },
      ),
    );
    await Promise.all(running.map((r) => r.waitFor('ready')));
    writeFileSync(signal, '');
    let finished = false;
    const all = Promise.all(running.map((r) => r.done)).finally(() => {
      finished = true;
    });
    const samples: { size: number; allocated: number }[] = [];
    // Sample until every process has exited, then once more (a pause between samples
    // leaves the two cores to the processes).
    for (let last = false; !last; ) {
      last = finished;
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat !== undefined) samples.push({ size: stat.size, allocated: stat.blocks * 512 });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const reports = (await all).map(reportOf);
    const largest = {
      size: Math.max(...samples.map((s) => s.size)),
      allocated: Math.max(...samples.map((s) => s.allocated)),
    };
    console.log(`${samples.length} samples, largest ${JSON.stringify(largest)}`);
    expect(largest.size).toBeLessThanOrEqual(BUDGET);
    expect(largest.allocated).toBeLessThanOrEqual(BUDGET);
    // The budget was binding (some entries went to the heap), and every output is exact.
    expect(reports.reduce((sum, r) => sum + r.heapBytes, 0)).toBeGreaterThan(0);
    reports.forEach((report, i) => {
      const layers = sets[i] as number[];
      const reference = referenceHashes({ ...MODEL, layers });
      expect(report.hashes).toEqual(
        Object.fromEntries(layers.map((l, j) => [String(l), reference[j]])),
      );
    });
  });
});
