import { rmSync } from 'node:fs';
import type { ChildTask, LoadResult } from './child-protocol.js';
import { BenchChild, runInChild } from './children.js';
import { MiB, smapsRollup } from './measure.js';
import { cachePathFor, programFor } from './models.js';
import { memoryModel } from './sizes.js';
import {
  type BenchOptions,
  compare,
  type Figure,
  type SectionBody,
  weightBytesOf,
} from './types.js';

/** Private dirty deltas below this are within what two smaps rollups of one process resolve. */
const DIRTY_RESOLUTION_BYTES = MiB;

const PROCESSES = 4;

type Moment = 'rollupAfter' | 'rollupAfterRun';
const delta = (result: LoadResult, field: string, at: Moment = 'rollupAfter') =>
  (result[at]?.[field] ?? 0) - (result.rollupBefore[field] ?? 0);
const cleanDelta = (result: LoadResult, at: Moment = 'rollupAfter') =>
  delta(result, 'Private_Clean', at) + delta(result, 'Shared_Clean', at);
const num = (value: number | boolean | undefined) => (typeof value === 'number' ? value : 0);

/** Sum of a smaps_rollup field over processes. */
function sumOf(pids: number[], field: string): number {
  return pids.reduce((sum, pid) => sum + (smapsRollup(pid)[field] ?? 0), 0);
}

/**
 * Starts `count` holding children (they answer "idle", load on "load", answer "result" and
 * exit on "exit"); returns their summed Pss idle and once all hold the model.
 */
export async function pssOfHeldChildren(
  start: () => BenchChild,
  count = PROCESSES,
): Promise<{ idle: number; loaded: number }> {
  const children = Array.from({ length: count }, start);
  try {
    for (const child of children) await child.next('idle');
    const pids = children.map((child) => child.pid);
    const idle = sumOf(pids, 'Pss');
    for (const child of children) {
      child.send('load');
      await child.next('result'); // one at a time: no two packs compete for the cores
    }
    return { idle, loaded: sumOf(pids, 'Pss') };
  } finally {
    await Promise.all(children.map((child) => child.exit()));
  }
}

const pssOfFour = (task: ChildTask) => pssOfHeldChildren(() => new BenchChild(task));

export async function memorySection(options: BenchOptions): Promise<SectionBody> {
  if (process.platform !== 'linux') {
    return {
      status: 'skipped',
      reason: 'needs /proc/<pid>/smaps (Linux)',
      figures: [],
      comparisons: [],
      notes: [],
    };
  }
  const spec = memoryModel(options.quick);
  const program = await programFor(options, spec);
  const cachePath = cachePathFor(options, spec, 'memory');
  rmSync(cachePath, { force: true });
  options.progress(`${spec.label}: memory after finalize, file (cold, warm) and heap mode`);
  const base = { kind: 'load', program, execute: true, hold: false, cacheMemory: true } as const;
  const cold = await runInChild<LoadResult>({ ...base, mode: 'file', cachePath });
  const warm = await runInChild<LoadResult>({ ...base, mode: 'file', cachePath });
  const heap = await runInChild<LoadResult>({ ...base, mode: 'heap', cachePath: '' });
  const size = `${spec.label} model`;
  const rollupMethod = (what: string, until: string) =>
    `delta of ${what} in /proc/self/smaps_rollup of a fresh child, from before Module.load to ${until}`;
  const finalized = 'after loadMethod (finalize done)';
  const ran = 'after one forward pass (packed pages resident)';
  const cacheMethod =
    "the cache's own mappings after one forward pass: XNNWeightsCache.memoryStats() (sums the /proc/self/smaps entries of the cache file's mappings, via mmap-native)";
  const figures: Figure[] = [];
  for (const [name, result] of [
    ['file, cold (packed in this process)', cold],
    ['file, warm (loaded from the file)', warm],
    ['heap', heap],
  ] as const) {
    figures.push(
      {
        label: `${size}, ${name}: private dirty added, after finalize`,
        value: delta(result, 'Private_Dirty') / MiB,
        unit: 'MiB',
        method: rollupMethod('Private_Dirty', finalized),
      },
      {
        label: `${size}, ${name}: clean added, after finalize`,
        value: cleanDelta(result) / MiB,
        unit: 'MiB',
        method: rollupMethod('Private_Clean + Shared_Clean', finalized),
      },
      {
        label: `${size}, ${name}: private dirty added, after a forward pass`,
        value: delta(result, 'Private_Dirty', 'rollupAfterRun') / MiB,
        unit: 'MiB',
        method: rollupMethod('Private_Dirty', ran),
      },
      {
        label: `${size}, ${name}: clean added, after a forward pass`,
        value: cleanDelta(result, 'rollupAfterRun') / MiB,
        unit: 'MiB',
        method: rollupMethod('Private_Clean + Shared_Clean', ran),
      },
    );
    if (result.memory && result.memory['available'] === true) {
      figures.push(
        {
          label: `${size}, ${name}: cache mappings dirty`,
          value: num(result.memory['dirtyBytes']) / MiB,
          unit: 'MiB',
          method: cacheMethod,
        },
        {
          label: `${size}, ${name}: cache mappings clean`,
          value: num(result.memory['cleanBytes']) / MiB,
          unit: 'MiB',
          method: cacheMethod,
        },
      );
    }
    if (name === 'heap') {
      figures.push({
        label: `${size}, heap: packed bytes on the heap`,
        value: num(result.memory?.['heapBytes']) / MiB,
        unit: 'MiB',
        method: 'XNNWeightsCache.memoryStats().heapBytes',
      });
    }
  }
  options.progress(
    `${spec.label}: PSS of ${PROCESSES} processes sharing one cache file vs heap-only`,
  );
  const held = { ...base, hold: true, cacheMemory: false } as const;
  const shared = await pssOfFour({ ...held, mode: 'file', cachePath });
  const heapOnly = await pssOfFour({ ...held, mode: 'heap', cachePath: '' });
  rmSync(cachePath, { force: true });
  const pssMethod = `sum of Pss in /proc/<pid>/smaps_rollup of ${PROCESSES} child processes while all hold the loaded model after one forward pass each (loaded one after the other; file mode: the cache file written by a previous start)`;
  figures.push(
    {
      label: `${PROCESSES} processes, shared cache file: sum of PSS`,
      value: shared.loaded / MiB,
      unit: 'MiB',
      method: pssMethod,
    },
    {
      label: `${PROCESSES} processes, heap-only: sum of PSS`,
      value: heapOnly.loaded / MiB,
      unit: 'MiB',
      method: pssMethod,
    },
    {
      label: `${PROCESSES} processes, shared cache file: PSS above idle`,
      value: (shared.loaded - shared.idle) / MiB,
      unit: 'MiB',
      method: `${pssMethod}, minus the same sum before loading`,
    },
    {
      label: `${PROCESSES} processes, heap-only: PSS above idle`,
      value: (heapOnly.loaded - heapOnly.idle) / MiB,
      unit: 'MiB',
      method: `${pssMethod}, minus the same sum before loading`,
    },
  );
  return {
    figures,
    comparisons: [
      compare({
        label: `private dirty after finalize, ${spec.label}`,
        ours: {
          name: 'file-backed (warm)',
          value: Math.max(delta(warm, 'Private_Dirty'), DIRTY_RESOLUTION_BYTES) / MiB,
        },
        peer: {
          name: 'heap mode',
          value: Math.max(delta(heap, 'Private_Dirty'), DIRTY_RESOLUTION_BYTES) / MiB,
        },
        unit: 'MiB',
        higherIsBetter: false,
        method: `${rollupMethod('Private_Dirty', finalized)} (a delta under 1 MiB, below what two rollups of a process resolve, counts as 1 MiB)`,
        main: true,
      }),
      compare({
        label: `sum PSS of ${PROCESSES} processes, ${spec.label}`,
        ours: { name: 'one shared cache file', value: shared.loaded },
        peer: { name: 'heap-only caches', value: heapOnly.loaded },
        unit: 'bytes',
        higherIsBetter: false,
        method: pssMethod,
        main: true,
      }),
    ],
    notes: [
      `Model: ${spec.layers} layers of ${spec.dim}x${spec.dim} f32 (${(weightBytesOf(spec) / MiB).toFixed(0)} MiB of weights). PSS totals include each Node process's own runtime.`,
      'Unpacked weights are safetensors files mapped read-only: clean, shared page-cache pages in both modes.',
    ],
  };
}
