import { describe, expect, it } from 'vitest';
import type { VersusResults } from '../src/versus-ort/results.js';
import { versusRows } from '../src/versus-ort/rows.js';
import { versusTable } from '../src/versus-ort/table.js';

const pss = { idle: 100 * 2 ** 20, loaded: 300 * 2 ** 20 };
const engine = {
  importMs: [10, 30, 20],
  coldMs: [100, 100, 100],
  firstOutputMs: [200, 200, 200],
  firstForwardMs: [5, 5, 5],
  steadyMs: [1, 1, 1],
  batchedMs: [10, 10, 10],
};

/** Figures made up for the layout: no measurement runs here. */
function results(threadsAvailable: boolean): VersusResults {
  return {
    spec: { label: 'test', layers: 2, dim: 8 },
    rounds: 3,
    batch: 64,
    processes: 4,
    threads: { available: threadsAvailable, reason: threadsAvailable ? '' : 'no such option' },
    memlayer: {
      ...engine,
      warmMs: [20, 20, 20],
      batchedTwoThreadsMs: threadsAvailable ? [6, 6, 6] : null,
      pss,
      mappedBytes: 0,
    },
    ort: {
      ...engine,
      importMs: [5, 5, 5],
      coldSavingMs: { optimized: [150, 150, 150], prepacked: [200, 200, 200] },
      warmMs: { plain: [90, 90, 90], optimized: [60, 60, 60], prepacked: [40, 40, 40] },
      best: 'prepacked',
      batchedTwoThreadsMs: [8, 8, 8],
      pss: { plain: pss, optimized: pss, prepacked: { idle: pss.idle, loaded: 2 * pss.loaded } },
      mappedBytes: { plain: 0, optimized: 0, prepacked: 0 },
    },
    agreement: {
      memlayerVsOrt: 1e-6,
      memlayerVsReference: 0,
      ortVsReference: 1e-6,
      largestOutput: 2,
      memlayerColdEqualsWarm: true,
    },
  };
}

describe('the comparison table', () => {
  it('prints medians with their range and the ratio of the medians', () => {
    const table = versusTable(results(true));
    expect(table).toContain('| import (ms) | 20 (10–30) | 5 (5–5) | 4.00x |');
    expect(table).toContain(
      '| ready, warm (ORT: its fastest, optimized model file + prepacked weights) (ms) | 20 (20–20) | 40 (40–40) | 0.50x |',
    );
    expect(table).toContain(
      '| forward, batch 64, steady, 2 threads (ms) | 6 (6–6) | 8 (8–8) | 0.75x |',
    );
    expect(table).toContain('max |memlayer − ORT| 1.00e-6');
  });

  it("says n/a for memlayer's 2-thread row when its Module has no threads option", () => {
    const table = versusTable(results(false));
    expect(table).toContain(
      '| forward, batch 64, steady, 2 threads (ms) | n/a (option not available) | 8 (8–8) | n/a |',
    );
    expect(table).toContain('no such option');
  });

  it('marks the warm start against the fastest ORT start and the lowest ORT PSS as main rows', () => {
    const main = versusRows(results(true)).filter((row) => row.main);
    expect(main.map((row) => row.metric)).toContain(
      'ready, warm (ORT: its fastest, optimized model file + prepacked weights)',
    );
    expect(main.filter((row) => row.metric.startsWith('sum of PSS'))).toHaveLength(1);
    expect(main.find((row) => row.metric.startsWith('sum of PSS'))?.metric).toContain(
      'ONNX + external data',
    );
  });
});
