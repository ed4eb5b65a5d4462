import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, usageError } from '../cli-error.js';
import { boolFlag, type Command } from '../command.js';
import type { ChurnFigures } from '../demo/steps.js';
import { formatBytes, formatMs, renderTable } from '../format.js';
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
    'the main job: a model run cold, then warm in a fresh process, reload cycles, an Ascend-sim churn',
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
        `model: ${model.layers} linear layers of ${model.features}x${model.features} f32 (${formatBytes(model.weightBytes)}) in ${dir}`,
      );
      log('cold run in a fresh process (packs and writes the cache)…');
      const cold = await runInFreshProcess(model.programPath, cachePath, 4, signal);
      const sizeAfterCold = statSync(cachePath).size;
      log('warm run in another fresh process (maps the cache)…');
      const warm = await runInFreshProcess(model.programPath, cachePath, 4, signal);
      log('heap-only run for comparison…');
      const heap = await runInFreshProcess(model.programPath, '', 4, signal);
      const cycles = quick ? 10 : 50;
      log(`${cycles} unload/reload cycles in this process…`);
      const reload = reloadCycles(model.programPath, cachePath, cycles);
      await checkpoint();
      log('Ascend-sim churn…');
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

/** The demo's figures side by side; "key: value" blocks when narrower than `columns`. */
export function renderDemoTable(
  f: {
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
  },
  columns: number | undefined,
): string {
  const memory = (run: { dirtyBytes: number; cleanBytes: number }) =>
    f.memoryMeasured
      ? `${formatBytes(run.dirtyBytes)} / ${formatBytes(run.cleanBytes)}`
      : 'not measured (no smaps)';
  const rows: string[][] = [
    [
      'init: pack or map the weights',
      formatMs(f.cold.initMs),
      formatMs(f.warm.initMs),
      `warm/cold ${f.warmOverCold.toFixed(3)}x; heap-only ${formatMs(f.heap.initMs)}`,
      'memlayer run in fresh processes',
    ],
    [
      'packing calls',
      String(f.cold.packs),
      String(f.warm.packs),
      `heap-only ${f.heap.packs}`,
      'packing counters',
    ],
    [
      'cache hits',
      String(f.cold.cacheHits),
      String(f.warm.cacheHits),
      '',
      'operators created from the cache',
    ],
    [
      'dirty / clean bytes of cache maps',
      memory(f.cold),
      memory(f.warm),
      `heap-only: ${formatBytes(f.heap.heapBytes)} packed on the JS heap`,
      '/proc/self/smaps after finalize',
    ],
    [
      'outputs (crc32c)',
      '',
      f.outputsIdentical ? 'identical' : 'DIFFERENT',
      'cold = warm = heap-only',
      'batch of 4 deterministic rows',
    ],
    [
      'cache file',
      formatBytes(f.cacheFile.bytesAfterCold),
      '',
      `v${f.cacheFile.version}, live ${formatBytes(f.cacheFile.liveBytes)}, orphans ${formatBytes(f.cacheFile.orphanBytes)}`,
      'memlayer inspect',
    ],
    [
      `${f.reload.cycles} unload/reload cycles`,
      '',
      `${f.reload.packs} packs`,
      f.reload.stable
        ? `file size stable at ${formatBytes(f.reload.maxBytes)}`
        : `file size ${formatBytes(f.reload.minBytes)}..${formatBytes(f.reload.maxBytes)} (grew)`,
      'stat after each cycle',
    ],
    [
      `Ascend-sim: ${f.ascend.cycles} load/unload cycles`,
      formatBytes(f.ascend.baselineBytes),
      formatBytes(f.ascend.afterBytes),
      `peak ${formatBytes(f.ascend.peakBytes)}; uploaded ${(f.ascend.bytesUploadedPerRegistration / f.ascend.callableBytes).toFixed(2)}x the callable per registration`,
      'device committed bytes before / after',
    ],
    [
      `distinct-callable churn (${f.ascend.distinct.callables} x ${f.ascend.distinct.cycles})`,
      '',
      formatBytes(f.ascend.distinct.refcountedAfter),
      `upload per registration: ${f.ascend.distinct.refcountedUploadRatio.toFixed(2)}x the callable`,
      'device committed bytes after the churn',
    ],
  ];
  // The device rows compare before / after the churn in the same two columns.
  return renderTable(
    ['figure', 'cold | before', 'warm | after', 'notes', 'measured by'],
    rows,
    columns,
  );
}
