import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import {
  createDefaultRegistry,
  Module,
  type XnnpackDelegateHandle,
  type XnnpackHandle,
} from '@memlayer/module-loader';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { cacheOptions } from './cache-options.js';
import { openFloorTable } from './floor.js';
import { dataFilesOf } from './models.js';

/**
 * Node flags of a child that counts allocations: a young generation large enough that no
 * collection runs while a start of the largest bench model allocates (~60 MiB at 16384
 * layers), so heap growth is what the start allocated, not what survived a collection.
 */
export const ALLOCATION_NODE_FLAGS = ['--min-semi-space-size=128', '--max-semi-space-size=128'];

export interface AllocationResult {
  /** What was measured: a warm start (Module.load, then loadMethod) or the floor. */
  readonly kind: 'warm' | 'floor';
  /** JavaScript heap bytes allocated by new Module + load (0 for the floor). */
  readonly programLoadBytes: number;
  /** By loadMethod, or by the floor's open + decode + table. */
  readonly methodLoadBytes: number;
  /** Cache entries the start used (warm: cache hits; floor: table rows). */
  readonly entries: number;
  /** Garbage collections during the window: the figures count only when this is 0. */
  readonly collections: number;
}

/** Heap bytes in use: with no collection in between, the growth is what was allocated. */
function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

/** Counts collections between start() and count() (their entries arrive on a later turn). */
class CollectionCounter {
  #seen = 0;
  #from = 0;
  #to = Number.POSITIVE_INFINITY;
  readonly #observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as PerformanceEntry[]) {
      if (entry.startTime >= this.#from && entry.startTime <= this.#to) this.#seen++;
    }
  });

  start(): void {
    this.#observer.observe({ entryTypes: ['gc'] });
    this.#from = performance.now();
  }

  stop(): void {
    this.#to = performance.now();
  }

  async count(): Promise<number> {
    // GC entries are delivered by a task queued after the collection.
    await new Promise((resolve) => setTimeout(resolve, 50));
    this.#observer.disconnect();
    return this.#seen;
  }
}

/**
 * Heap bytes a warm start allocates, in this (fresh) process: new Module + load with
 * packed_cache_path set, then loadMethod(method), as the bench's warm start runs them.
 * Allocation is a figure that repeats from run to run, unlike time on a shared machine, and
 * it drives the garbage collections of a start: every table a start keeps survives them.
 */
export async function measureWarmAllocations(
  program: string,
  cachePath: string,
  method: string,
): Promise<AllocationResult> {
  const options = cacheOptions(cachePath);
  const counter = new CollectionCounter();
  counter.start();
  const start = heapUsed();
  const registry = createDefaultRegistry({ xnnpack: { caches: new XNNWeightsCacheManager() } });
  const module = new Module(program, { registry, dataFiles: dataFilesOf(program) });
  module.load(options);
  const loaded = heapUsed();
  module.loadMethod(method);
  const runnable = heapUsed();
  counter.stop();
  const handle = module.methodHandle(method) as XnnpackHandle | XnnpackDelegateHandle;
  const entries = handle.cacheHits;
  module.dispose();
  return {
    kind: 'warm',
    programLoadBytes: loaded - start,
    methodLoadBytes: runnable - loaded,
    entries,
    collections: await counter.count(),
  };
}

/** Heap bytes the floor (floor.ts) allocates, in this (fresh) process. */
export async function measureFloorAllocations(cachePath: string): Promise<AllocationResult> {
  const counter = new CollectionCounter();
  counter.start();
  const start = heapUsed();
  const floor = openFloorTable(cachePath);
  const end = heapUsed();
  counter.stop();
  const entries = floor.table.size;
  floor.close();
  return {
    kind: 'floor',
    programLoadBytes: 0,
    methodLoadBytes: end - start,
    entries,
    collections: await counter.count(),
  };
}
