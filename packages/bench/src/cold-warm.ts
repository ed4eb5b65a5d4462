import { rmSync, statSync } from 'node:fs';
import type { AllocationResult } from './allocations.js';
import type { LoadResult } from './child-protocol.js';
import { runInChild } from './children.js';
import type { FloorResult } from './floor.js';
import { MiB, median } from './measure.js';
import { cachePathFor, programFor } from './models.js';
import { coldWarmModels } from './sizes.js';
import {
  type BenchOptions,
  type ColdWarmResult,
  type Comparison,
  compare,
  type Figure,
  type ModelSpec,
  type SectionBody,
  weightBytesOf,
} from './types.js';

const METHOD_COLD =
  'fresh child process, cache file deleted first: Module.load + loadMethod of the .pte (hashes each constant as it packs it into the file-backed cache; the durable commit runs after the method is runnable, in the background or at dispose); median of the runs';
const METHOD_COLD_SAVED =
  'as the cold start, with save_weight_cache_on_disk = true: data synced and index committed before the method is runnable; median of the runs';
const METHOD_WARM =
  'fresh child processes right after the cold one, same cache file (page cache warm): Module.load + loadMethod of the .pte (reads the keys where they lie, finds every layer); each run takes 3 warm starts, each followed by a floor (the two see the machine alike); median of all';
const METHOD_FLOOR =
  'fresh child process right after each warm start, same cache file: open it, decode its index, map the data in windows of at most 32 MiB (1 GiB from an entry larger than that) and build a name → bytes table (no module, no weights, no packing); 3 per run, median of all';
const METHOD_HEAP =
  'fresh child process, heap-only cache (no packed_cache_path): what every start costs without a cache file; median of the runs';

/** Cold, warm and heap-only starts of one model, each in a fresh process (memoized per run). */
export async function measureColdWarm(
  options: BenchOptions,
  spec: ModelSpec,
  runs: number,
): Promise<ColdWarmResult> {
  const known = options.shared.coldWarm.get(spec.label);
  if (known) return known;
  const program = await programFor(options, spec);
  const cachePath = cachePathFor(options, spec, 'cold-warm');
  const cold: LoadResult[] = [];
  const coldSaved: LoadResult[] = [];
  const warm: LoadResult[] = [];
  const heap: LoadResult[] = [];
  const floor: FloorResult[] = [];
  let committedFileBytes = 0;
  for (let run = 0; run < runs; run++) {
    options.progress(`${spec.label}: cold/warm/heap start, run ${run + 1} of ${runs}`);
    forgetCache(cachePath);
    const execute = run === 0;
    // One start of the model in a fresh child: file-backed at cachePath, or heap-only.
    const start = (mode: 'file' | 'heap', extra: { execute?: boolean; saveNow?: boolean } = {}) =>
      runInChild<LoadResult>({
        kind: 'load',
        program,
        mode,
        cachePath: mode === 'file' ? cachePath : '',
        execute: extra.execute ?? false,
        saveNow: extra.saveNow ?? false,
        hold: false,
        cacheMemory: false,
      });
    // The same file-backed start twice: the first packs (no file), the second maps it.
    cold.push(await start('file', { execute }));
    // Read once the cold child has exited: its deferred commit has cut the growth tail.
    if (run === 0) committedFileBytes = statSync(cachePath).size;
    // Warm start and floor side by side, a few times: their ratio is the point,
    // and a median of 3 single starts moved 40% between runs on this shared machine.
    for (let sample = 0; sample < warmSamples(options.quick); sample++) {
      warm.push(await start('file', { execute: execute && sample === 0 }));
      floor.push(await runInChild<FloorResult>({ kind: 'floor', cachePath }));
    }
    heap.push(await start('heap'));
    forgetCache(cachePath);
    coldSaved.push(await start('file', { saveNow: true }));
  }
  // Allocations repeat from run to run: one warm start and one floor, of the file the last
  // cold start (saved at once) left.
  options.progress(`${spec.label}: heap allocated by a warm start and by the floor`);
  const allocations = (what: 'warm' | 'floor') =>
    runInChild<AllocationResult>({
      kind: 'allocations',
      what,
      program,
      cachePath,
      method: 'forward',
    });
  const warmAllocations = await allocations('warm');
  const floorAllocations = await allocations('floor');
  forgetCache(cachePath);
  const pick = (list: LoadResult[], field: 'timeToRunnableMs' | 'methodLoadMs') =>
    median(list.map((result) => result[field]));
  const result: ColdWarmResult = {
    spec,
    coldMs: pick(cold, 'timeToRunnableMs'),
    coldSavedMs: pick(coldSaved, 'timeToRunnableMs'),
    warmMs: pick(warm, 'timeToRunnableMs'),
    heapMs: pick(heap, 'timeToRunnableMs'),
    floorMs: median(floor.map((result) => result.floorMs)),
    warmAllocations,
    floorAllocations,
    coldMethodMs: pick(cold, 'methodLoadMs'),
    coldPacks: cold[0]?.packCalls ?? Number.NaN,
    warmPacks: Math.max(...warm.map((result) => result.packCalls)),
    warmHits: Math.min(...warm.map((result) => result.cacheHits)),
    heapPacks: heap[0]?.packCalls ?? Number.NaN,
    runs,
    outputsMatch:
      cold[0]?.outputChecksum == null ? null : cold[0].outputChecksum === warm[0]?.outputChecksum,
    cacheFileBytes: committedFileBytes,
    coldPeakRssBytes: median(cold.map((result) => result.peakRssBytes)),
    heapPeakRssBytes: median(heap.map((result) => result.peakRssBytes)),
    packedBytes: cold[0]?.packedBytesWritten ?? Number.NaN,
  };
  options.shared.coldWarm.set(spec.label, result);
  return result;
}

/** A cold start begins without the cache file: the first start a model ever gets. */
function forgetCache(cachePath: string): void {
  rmSync(cachePath, { force: true });
}

/**
 * Peak RSS of the cold and the heap-only start against what a load cannot do without: the
 * packed bytes plus the largest layer's unpacked bytes (unpacked weights released as each
 * layer is packed).
 */
function peakRssFigures(size: string, spec: ModelSpec, r: ColdWarmResult): Figure[] {
  const largestLayerBytes = (spec.dim * spec.dim + spec.dim) * 4;
  const bound = r.packedBytes + largestLayerBytes;
  const how = (start: string) =>
    `VmHWM of the ${start} child (/proc/self/status) once the method is runnable, before any forward pass: the whole process, Node's own memory included; median of the runs`;
  const against = `the peak above / (packed bytes ${(r.packedBytes / MiB).toFixed(1)} MiB + the largest layer's unpacked bytes ${(largestLayerBytes / MiB).toFixed(2)} MiB), same run (target for 1 GiB: at most 1.15)`;
  return [
    {
      label: `${size}: cold start peak RSS`,
      value: r.coldPeakRssBytes / MiB,
      unit: 'MiB',
      method: `${how('cold start')}. Packed bytes go to the cache file through the page cache, not this process's memory`,
    },
    {
      label: `${size}: cold start peak RSS / (packed + largest layer)`,
      value: r.coldPeakRssBytes / bound,
      unit: 'ratio',
      method: against,
    },
    {
      label: `${size}: heap-only start peak RSS`,
      value: r.heapPeakRssBytes / MiB,
      unit: 'MiB',
      method: how('heap-only start'),
    },
    {
      label: `${size}: heap-only start peak RSS / (packed + largest layer)`,
      value: r.heapPeakRssBytes / bound,
      unit: 'ratio',
      method: against,
    },
  ];
}

/** Warm starts (each with a floor) per cold start. */
export function warmSamples(quick: boolean): number {
  return quick ? 1 : 3;
}

export function coldWarmRuns(quick: boolean, spec: ModelSpec): number {
  if (quick) return 2;
  return weightBytesOf(spec) > 600 * MiB ? 2 : 3;
}

export async function coldWarmSection(options: BenchOptions): Promise<SectionBody> {
  const figures: Figure[] = [];
  const comparisons: Comparison[] = [];
  const notes: string[] = [];
  const specs = coldWarmModels(options.quick);
  for (const [index, spec] of specs.entries()) {
    const r = await measureColdWarm(options, spec, coldWarmRuns(options.quick, spec));
    const size = `${spec.label} (${spec.layers} layers ${spec.dim}x${spec.dim})`;
    figures.push(
      {
        label: `${size}: cold start, time to runnable method`,
        value: r.coldMs,
        unit: 'ms',
        method: METHOD_COLD,
      },
      {
        label: `${size}: cold start with save_weight_cache_on_disk, time to runnable method`,
        value: r.coldSavedMs,
        unit: 'ms',
        method: METHOD_COLD_SAVED,
      },
      {
        label: `${size}: warm start, time to runnable method`,
        value: r.warmMs,
        unit: 'ms',
        method: METHOD_WARM,
      },
      {
        label: `${size}: floor (map + decode index + name table)`,
        value: r.floorMs,
        unit: 'ms',
        method: METHOD_FLOOR,
      },
      {
        label: `${size}: ratio warm / floor`,
        value: r.warmMs / r.floorMs,
        unit: 'ratio',
        method: 'the two medians above, same run (target: at most 1.5)',
      },
      ...allocationFigures(size, r.warmAllocations, r.floorAllocations),
      {
        label: `${size}: warm start per entry`,
        value: (r.warmMs * 1000) / spec.layers,
        unit: 'µs',
        method: `warm median / ${spec.layers} cache entries (floor: ${((r.floorMs * 1000) / spec.layers).toFixed(2)} µs per entry)`,
      },
      {
        label: `${size}: heap-only start (no cache file)`,
        value: r.heapMs,
        unit: 'ms',
        method: METHOD_HEAP,
      },
      {
        label: `${size}: ratio warm / cold`,
        value: r.warmMs / r.coldMs,
        unit: 'ratio',
        method: 'the two medians above, same run',
      },
      {
        label: `${size}: packing calls cold / warm`,
        value: r.coldPacks,
        unit: `calls cold (warm: ${r.warmPacks})`,
        method: `packingStats().calls in each child; warm cache hits: ${r.warmHits} of ${spec.layers} operators. Anchor: ExecuTorch reports that a cache hit skips packing entirely (0 packs)`,
      },
      {
        label: `${size}: cache file size`,
        value: r.cacheFileBytes / MiB,
        unit: 'MiB',
        method: "fs.statSync after the cold start's process exited (its commit done)",
      },
    );
    figures.push(...peakRssFigures(size, spec, r));
    if (r.warmPacks !== 0)
      notes.push(`${size}: the warm start packed ${r.warmPacks} times (expected 0).`);
    if (r.outputsMatch === false) notes.push(`${size}: warm output differs from cold output.`);
    else if (r.outputsMatch)
      notes.push(
        `${size}: one forward pass after the cold and the warm start gave the same output.`,
      );
    const main = index === specs.length - 1;
    comparisons.push(
      compare({
        label: `warm vs cold start, ${spec.label}`,
        ours: { name: 'warm (file cache hit)', value: r.warmMs },
        peer: { name: 'cold (packing)', value: r.coldMs },
        unit: 'ms',
        higherIsBetter: false,
        method: `${METHOD_WARM} vs ${METHOD_COLD}`,
        main,
      }),
      compare({
        label: `cold start vs heap-only start, ${spec.label}`,
        ours: { name: 'cold (file-backed, packs)', value: r.coldMs },
        peer: { name: 'heap-only (packs)', value: r.heapMs },
        unit: 'ms',
        higherIsBetter: false,
        method: `${METHOD_COLD} vs ${METHOD_HEAP} (target: at most 1.3x)`,
      }),
      compare({
        label: `warm start vs its floor, ${spec.label}`,
        ours: { name: 'warm (Module.load + loadMethod)', value: r.warmMs },
        peer: { name: 'floor (map + index + table)', value: r.floorMs },
        unit: 'ms',
        higherIsBetter: false,
        method: `${METHOD_WARM} vs ${METHOD_FLOOR}`,
      }),
      compare({
        label: `warm start vs heap-only start, ${spec.label}`,
        ours: { name: 'warm (file cache hit)', value: r.warmMs },
        peer: { name: 'heap-only (packs every start)', value: r.heapMs },
        unit: 'ms',
        higherIsBetter: false,
        method: `${METHOD_WARM} vs ${METHOD_HEAP}`,
      }),
    );
  }
  return { figures, comparisons, notes };
}

const METHOD_ALLOCATIONS =
  'process.memoryUsage().heapUsed before and after, in a fresh child whose young generation (128 MiB semi-spaces) is large enough that no collection runs meanwhile (a collection would make the figure unusable: it is then left out); one warm start of the file the last cold start saved, then the floor of that file in another child';

/** Heap bytes per entry a warm start and the floor allocate, and their ratio. */
function allocationFigures(
  size: string,
  warm: AllocationResult,
  floor: AllocationResult,
): Figure[] {
  const usable = warm.collections === 0 && floor.collections === 0;
  const warmBytes = warm.programLoadBytes + warm.methodLoadBytes;
  const perEntry = (bytes: number, entries: number) =>
    usable && entries > 0 ? bytes / entries : null;
  const warmPerEntry = perEntry(warmBytes, warm.entries);
  const floorPerEntry = perEntry(floor.methodLoadBytes, floor.entries);
  const mib = (bytes: number) => `${(bytes / MiB).toFixed(2)} MiB`;
  const collections = usable
    ? ''
    : ` (left out: ${warm.collections} + ${floor.collections} collections ran)`;
  return [
    {
      label: `${size}: heap allocated by the warm start, per entry`,
      value: warmPerEntry,
      unit: 'bytes',
      method: `${METHOD_ALLOCATIONS}: Module.load ${mib(warm.programLoadBytes)} + loadMethod ${mib(warm.methodLoadBytes)} over ${warm.entries} cache hits${collections}`,
    },
    {
      label: `${size}: heap allocated by the floor, per entry`,
      value: floorPerEntry,
      unit: 'bytes',
      method: `${METHOD_ALLOCATIONS}: ${mib(floor.methodLoadBytes)} over ${floor.entries} entries${collections}`,
    },
    {
      label: `${size}: ratio of allocations warm / floor`,
      value: warmPerEntry !== null && floorPerEntry !== null ? warmPerEntry / floorPerEntry : null,
      unit: 'ratio',
      method:
        'the two figures above: what a start keeps and throws away per entry over what the floor does (its garbage collections grow with it)',
    },
  ];
}
