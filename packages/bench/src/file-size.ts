import { rmSync } from 'node:fs';
import { GEMM_TILINGS } from '@memlayer/xnnpack-cache';
import type { CyclesResult } from './child-protocol.js';
import { runInChild } from './children.js';
import { MiB } from './measure.js';
import { cachePathFor, programFor } from './models.js';
import { cyclesModel } from './sizes.js';
import { type BenchOptions, compare, type SectionBody } from './types.js';

export async function fileSizeSection(options: BenchOptions): Promise<SectionBody> {
  const spec = cyclesModel(options.quick);
  const cycles = options.quick ? 5 : 50;
  const program = await programFor(options, spec);
  const cachePath = cachePathFor(options, spec, 'cycles');
  rmSync(cachePath, { force: true });
  options.progress(`${spec.label}: ${cycles} unload/reload cycles, seed change, compact()`);
  const r = await runInChild<CyclesResult>({
    kind: 'cycles',
    program,
    cachePath,
    cycles,
    seedChangeTiling: GEMM_TILINGS.nr16kr4sr1,
  });
  rmSync(cachePath, { force: true });
  const first = r.fileBytesPerCycle[0] ?? 0;
  const last = r.fileBytesPerCycle.at(-1) ?? 0;
  const cycleMethod = `one child process: ${cycles} times Module.load + loadMethod + dispose with a file-backed XNNWeightsCacheManager (each dispose releases and closes the cache; the next load maps the file again); fs.statSync after each cycle`;
  const seedMethod =
    'same process, after the cycles: the model loaded with another GEMM tiling (nr=16 kr=4 sr=1: a different seed for every layer), disposed, then compact(path), then loaded again with that tiling';
  const reloadPacks = r.packsPerCycle.slice(1).reduce((sum, packs) => sum + packs, 0);
  return {
    figures: [
      { label: 'file size after cycle 1', value: first / MiB, unit: 'MiB', method: cycleMethod },
      {
        label: `file size after cycle ${cycles}`,
        value: last / MiB,
        unit: 'MiB',
        method: cycleMethod,
      },
      {
        label: 'growth per reload cycle',
        value: (last - first) / Math.max(cycles - 1, 1),
        unit: 'bytes',
        method: `(size after cycle ${cycles} − size after cycle 1) / ${cycles - 1}`,
      },
      {
        label: `packing calls in cycles 2..${cycles}`,
        value: reloadPacks,
        unit: `calls (cycle 1: ${r.packsPerCycle[0] ?? 0})`,
        method: 'packingStats().calls per cycle',
      },
      {
        label: 'file size before the seed change',
        value: r.bytesBeforeSeedChange / MiB,
        unit: 'MiB',
        method: seedMethod,
      },
      {
        label: 'file size after the seed change',
        value: r.bytesAfterSeedChange / MiB,
        unit: 'MiB',
        method: `${seedMethod}; ${r.packsAtSeedChange} layers repacked`,
      },
      {
        label: 'orphan bytes after the seed change',
        value: r.orphanBytesAfterSeedChange / MiB,
        unit: 'MiB',
        method: 'XNNWeightsCache.stats().orphanBytes while the repacked model is loaded',
      },
      {
        label: 'file size after compact()',
        value: r.compact.bytesAfter / MiB,
        unit: 'MiB',
        method: `compact(path): live entries rewritten, atomic rename; ${r.compact.entries} entries kept`,
      },
      {
        label: 'packing calls loading after compact()',
        value: r.packsAfterCompact,
        unit: 'calls',
        method:
          'packingStats().calls of a load with the new tiling after compaction (0: every live entry survived)',
      },
    ],
    comparisons: [
      compare({
        label: `file size after a seed change, ${spec.label}`,
        ours: { name: 'after compact()', value: r.compact.bytesAfter },
        peer: { name: 'orphans kept (upstream)', value: r.bytesAfterSeedChange },
        unit: 'bytes',
        higherIsBetter: false,
        method: `${seedMethod}. Upstream ExecuTorch keeps superseded packs in the file forever: its size is the "before compact()" figure`,
        main: true,
      }),
    ],
    notes: [
      `Model: ${spec.layers} layers of ${spec.dim}x${spec.dim} f32. Anchor (not measured here): ExecuTorch measured ~450 MB appended per reload cycle before PR #20245 and a stable ~593 MB file after it.`,
    ],
    series: { fileBytesPerCycle: r.fileBytesPerCycle, packsPerCycle: r.packsPerCycle },
  };
}
