import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, usageError } from '../cli-error.js';
import { boolFlag, type Command } from '../command.js';
import type { ChurnFigures } from '../demo/steps.js';
import { formatBytes, formatMs, renderTable, wrap } from '../format.js';
import type { RunReport } from '../run-program.js';
import { loadReport } from './inspect.js';

/** The figures of one file-backed run that the demo table shows. */
function runFigures(run: RunReport) {
  return {
    initMs: run.timings.initMs,
    packs: run.packs,
    cacheHits: run.cacheHits,
    dirtyBytes: run.cache?.dirtyBytes ?? 0,
    cleanBytes: run.cache?.cleanBytes ?? 0,
  };
}

export const demoCommand: Command = {
  name: 'demo',
  summary:
    'the main job: a model started cold (packs), then warm (maps) in a fresh process, reload cycles, the simulated Ascend device',
  args: '',
  options: {
    quick: {
      type: 'boolean',
      description: 'a smaller model and fewer cycles (seconds, not minutes)',
    },
    keep: {
      type: 'boolean',
      description: 'keep the temp folder with the model and the cache (its path is printed)',
    },
    json: { type: 'boolean', description: 'print the figures as one JSON document' },
  },
  async run(context) {
    if (context.positionals.length > 0)
      throw usageError(`Unexpected argument "${context.positionals[0]}"`);
    const quick = boolFlag(context, 'quick');
    const keep = boolFlag(context, 'keep');
    const [{ writeDemoModel }, { ascendChurn, reloadCycles, runInFreshProcess }] =
      await Promise.all([import('../demo/model.js'), import('../demo/steps.js')]);
    const dir = mkdtempSync(join(tmpdir(), 'memlayer-demo-'));
    // Removed when the demo ends or is interrupted, unless --keep (then only on interrupt).
    context.temp.track(dir);
    const log = (text: string) => context.stderr(`demo: ${text}\n`);
    const { signal } = context;
    // Lets a SIGINT/SIGTERM handler run between the synchronous steps.
    const checkpoint = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      signal.throwIfAborted();
    };
    try {
      const model = writeDemoModel(dir, quick ? 8 : 16, quick ? 512 : 1024);
      const cachePath = join(dir, 'model.xpwc');
      log(
        `a model of ${model.layers} linear layers of ${model.features}x${model.features} f32 weights (${formatBytes(model.weightBytes)}) in ${dir}`,
      );
      log(
        '1/5 cold start (packs): a fresh process packs each layer for the kernels and writes a cache file…',
      );
      const cold = await runInFreshProcess(model.programPath, cachePath, 4, signal);
      const sizeAfterCold = statSync(cachePath).size;
      log('2/5 warm start (maps): another fresh process maps the cache file, packs nothing…');
      const warm = await runInFreshProcess(model.programPath, cachePath, 4, signal);
      log(
        '3/5 heap-only start: no cache file, packs onto its heap (every start without memlayer)…',
      );
      const heap = await runInFreshProcess(model.programPath, '', 4, signal);
      const cycles = quick ? 10 : 50;
      log(
        `4/5 ${cycles} unload/reload cycles: each reload maps the cache file, which must not grow…`,
      );
      const reload = reloadCycles(model.programPath, cachePath, cycles);
      await checkpoint();
      log('5/5 the simulated Ascend device: programs loaded and unloaded give its memory back…');
      const churn = ascendChurn(model.programPath, quick ? 25 : 100);
      await checkpoint();
      const report = await loadReport(cachePath);
      const identical =
        warm.outputs[0]?.crc32c === cold.outputs[0]?.crc32c &&
        heap.outputs[0]?.crc32c === cold.outputs[0]?.crc32c;
      const stable = reload.fileSizes.every((size) => size === sizeAfterCold);
      const figures = {
        model: {
          layers: model.layers,
          features: model.features,
          weightBytes: model.weightBytes,
          dir: keep ? dir : null,
        },
        cold: runFigures(cold),
        warm: runFigures(warm),
        heap: {
          initMs: heap.timings.initMs,
          packs: heap.packs,
          heapBytes: heap.cache?.heapBytes ?? 0,
        },
        warmOverCold: warm.timings.initMs / cold.timings.initMs,
        outputsIdentical: identical,
        memoryMeasured: cold.cache?.memoryMeasured === true,
        cacheFile: {
          bytesAfterCold: sizeAfterCold,
          liveBytes: report.liveBytes,
          orphanBytes: report.orphanBytes,
          version: report.version,
        },
        reload: {
          cycles: reload.cycles,
          packs: reload.packs,
          minBytes: Math.min(...reload.fileSizes),
          maxBytes: Math.max(...reload.fileSizes),
          stable,
        },
        ascend: churn,
      };
      if (boolFlag(context, 'json')) {
        context.stdout(`${JSON.stringify(figures, null, 2)}\n`);
      } else {
        context.stdout(`${renderDemoTable(figures, context.columns)}\n`);
      }
      const ok =
        identical &&
        stable &&
        warm.packs === 0 &&
        reload.packs === 0 &&
        churn.afterBytes === churn.baselineBytes &&
        churn.distinct.refcountedAfter === 0;
      return ok ? EXIT_OK : EXIT_PROBLEMS;
    } finally {
      if (keep && !signal.aborted) {
        context.temp.commit(dir);
        log(`kept ${dir}`);
      }
    }
  },
};

/** The figures the demo prints (its --json document). */
export interface DemoFigures {
  model: { layers: number; features: number; weightBytes: number };
  cold: {
    initMs: number;
    packs: number;
    cacheHits: number;
    dirtyBytes: number;
    cleanBytes: number;
  };
  warm: {
    initMs: number;
    packs: number;
    cacheHits: number;
    dirtyBytes: number;
    cleanBytes: number;
  };
  heap: { initMs: number; packs: number; heapBytes: number };
  warmOverCold: number;
  outputsIdentical: boolean;
  memoryMeasured: boolean;
  cacheFile: { bytesAfterCold: number; liveBytes: number; orphanBytes: number; version: number };
  reload: { cycles: number; packs: number; minBytes: number; maxBytes: number; stable: boolean };
  ascend: ChurnFigures;
}

/** How many processes the verdict's memory figure shares one cache file between. */
const SHARING_PROCESSES = 4;

/**
 * The demo's report: the three starts side by side, what the reload cycles and the simulated
 * Ascend device showed, and a verdict line; tables become "key: value" blocks when narrower
 * than `columns`.
 */
export function renderDemoTable(f: DemoFigures, columns: number | undefined): string {
  const width = columns ?? Number.POSITIVE_INFINITY;
  const fit = (text: string) => wrap(text, width, 2).join('\n');
  const owned = (bytes: number) => (f.memoryMeasured ? formatBytes(bytes) : 'not measured');
  const starts = renderTable(
    ['', 'cold start (packs)', 'warm start (maps)', 'heap-only start'],
    [
      ['start time', formatMs(f.cold.initMs), formatMs(f.warm.initMs), formatMs(f.heap.initMs)],
      ['layers packed', String(f.cold.packs), String(f.warm.packs), String(f.heap.packs)],
      ['layers from the cache', String(f.cold.cacheHits), String(f.warm.cacheHits), '0'],
      [
        'weights in own memory',
        owned(f.cold.dirtyBytes),
        owned(f.warm.dirtyBytes),
        formatBytes(f.heap.heapBytes),
      ],
      ['weights shared (file)', owned(f.cold.cleanBytes), owned(f.warm.cleanBytes), '0 B'],
    ],
    columns,
  );
  const device = renderTable(
    ['the simulated Ascend device', 'memory before', 'after', 'peak'],
    [
      [
        `one program, ${f.ascend.cycles} loads`,
        formatBytes(f.ascend.baselineBytes),
        formatBytes(f.ascend.afterBytes),
        formatBytes(f.ascend.peakBytes),
      ],
      [
        `${f.ascend.distinct.callables} programs, ${f.ascend.distinct.cycles} loads each`,
        '',
        formatBytes(f.ascend.distinct.refcountedAfter),
        '',
      ],
    ],
    columns,
  );
  const facts = [
    `outputs: ${f.outputsIdentical ? 'identical' : 'DIFFERENT'} from the cold, warm and heap-only starts (crc32c of a batch of 4 rows)`,
    `cache file: ${formatBytes(f.cacheFile.bytesAfterCold)} (format v${f.cacheFile.version}, ${formatBytes(f.cacheFile.liveBytes)} of packed weights, ${formatBytes(f.cacheFile.orphanBytes)} unused; see memlayer inspect)`,
    `${f.reload.cycles} unload/reload cycles: ${f.reload.packs} layers packed; ${
      f.reload.stable
        ? `the file stayed at ${formatBytes(f.reload.maxBytes)}`
        : `the file grew: ${formatBytes(f.reload.minBytes)}..${formatBytes(f.reload.maxBytes)}`
    }`,
    `the device keeps one buffer per program, counted by its users: each load uploaded ${(f.ascend.bytesUploadedPerRegistration / f.ascend.callableBytes).toFixed(2)}x the program's size (${f.ascend.distinct.refcountedUploadRatio.toFixed(2)}x with ${f.ascend.distinct.callables} different programs)`,
  ];
  return [starts, '', device, '', ...facts.map(fit), '', ...demoVerdict(f).map(fit)].join('\n');
}

/** The verdict line, and why when a result goes the other way. */
export function demoVerdict(f: DemoFigures): string[] {
  const lines: string[] = [];
  const speedUp = f.cold.initMs / Math.max(f.warm.initMs, 1e-6);
  const parts = [
    speedUp >= 1
      ? `warm start ${speedUp.toFixed(1)}x faster than the cold start that packed`
      : `warm start ${(1 / speedUp).toFixed(1)}x slower than the cold start that packed`,
  ];
  if (f.memoryMeasured) {
    // N heap-only processes each hold the packed weights; N processes mapping one cache
    // file hold one shared copy plus what each owns.
    const heapOnly = SHARING_PROCESSES * f.heap.heapBytes;
    const shared = f.warm.cleanBytes + SHARING_PROCESSES * f.warm.dirtyBytes;
    if (shared > 0) {
      parts.push(
        `${SHARING_PROCESSES} processes would share one copy: ${(heapOnly / shared).toFixed(1)}x less memory (${formatBytes(shared)} vs ${formatBytes(heapOnly)})`,
      );
    }
  }
  lines.push(`verdict: ${parts.join('; ')}`);
  if (f.heap.initMs < f.warm.initMs) {
    lines.push(
      `why the heap-only start won: at this size (${formatBytes(f.model.weightBytes)}) mapping the cache file and reading its index cost more than packing the weights on the heap; the warm start pulls ahead as models grow (see the benchmarks)`,
    );
  }
  if (speedUp < 1) {
    lines.push(
      'why the cold start won: this machine was busy during the warm start; run the demo again',
    );
  }
  return lines;
}
