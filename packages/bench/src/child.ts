// Entry of the measurement child processes: `node child.js '<task json>'`. Each start of a
// model runs in a fresh process, so a warm start proves what a new process gets from the
// cache file alone. Messages to the parent are JSON lines prefixed with CHILD_MESSAGE.
import { existsSync, statSync } from 'node:fs';
import {
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  type XnnpackDelegateHandle,
  type XnnpackHandle,
} from '@memlayer/module-loader';
import {
  compact,
  createFullyConnectedNcF32,
  type GemmTiling,
  InMemoryNamedDataMap,
  packingStats,
  resetPackingStats,
  tensorView,
  XNNWeightsCache,
  XNNWeightsCacheManager,
} from '@memlayer/xnnpack-cache';
import { measureFloorAllocations, measureWarmAllocations } from './allocations.js';
import { cacheOptions } from './cache-options.js';
import { parentChannel } from './child-io.js';
import type { ChildTask, CyclesResult, LoadResult, PackResult } from './child-protocol.js';
import { measureFloor } from './floor.js';
import { fillWeights, nowMs, peakRssBytes, smapsRollup } from './measure.js';
import { dataFilesOf } from './models.js';

const METHOD = 'forward';
const { send, waitFor } = parentChannel();

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

function numbers(record: object): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(record))
    if (typeof value === 'number') out[key] = value;
  return out;
}

async function load(task: Extract<ChildTask, { kind: 'load' }>): Promise<void> {
  if (task.hold) {
    send('idle', { pid: process.pid });
    await waitFor('load');
  }
  const rollupBefore = smapsRollup();
  resetPackingStats();
  const start = nowMs();
  const manager = task.mode === 'file' ? new XNNWeightsCacheManager() : undefined;
  const registry = createDefaultRegistry({ xnnpack: manager ? { caches: manager } : {} });
  const module = new Module(task.program, { registry, dataFiles: dataFilesOf(task.program) });
  module.load(
    task.mode === 'file'
      ? cacheOptions(task.cachePath, task.saveNow === true)
      : new LoadBackendOptionsMap(),
  );
  const loaded = nowMs();
  module.loadMethod(METHOD);
  const runnable = nowMs();
  const peakRss = peakRssBytes();
  const packing = packingStats();
  const handle = module.methodHandle(METHOD) as XnnpackHandle | XnnpackDelegateHandle;
  const rollupAfter = smapsRollup();
  let outputChecksum: number | null = null;
  let rollupAfterRun: Record<string, number> | null = null;
  if (task.execute) {
    const features = module.methodMeta(METHOD).inputs[0]?.at(-1) ?? 0;
    const [y] = module.execute(METHOD, [
      { shape: [1, features], data: new Float32Array(features).fill(0.5) },
    ]);
    outputChecksum = 0;
    for (const value of y?.data ?? []) outputChecksum += value;
    rollupAfterRun = smapsRollup();
  }
  const memory = task.cacheMemory
    ? (handle.cache.memoryStats() as unknown as Record<string, number | boolean>)
    : null;
  const result: LoadResult = {
    timeToRunnableMs: runnable - start,
    programLoadMs: loaded - start,
    methodLoadMs: runnable - loaded,
    packCalls: packing.calls,
    packedBytesWritten: packing.bytes,
    cacheHits: handle.cacheHits,
    operators: handle.operators.size,
    cacheStats: numbers(handle.cache.stats()),
    memory,
    rollupBefore,
    rollupAfter,
    rollupAfterRun,
    outputChecksum,
    cacheFileBytes: task.mode === 'file' ? fileSize(task.cachePath) : 0,
    peakRssBytes: peakRss,
  };
  send('result', result);
  if (task.hold) await waitFor('exit');
  module.dispose();
}

function cycles(task: Extract<ChildTask, { kind: 'cycles' }>): void {
  const manager = new XNNWeightsCacheManager();
  const options = cacheOptions(task.cachePath, true);
  const startOnce = (tiling?: GemmTiling) => {
    resetPackingStats();
    const registry = createDefaultRegistry({
      xnnpack: tiling === undefined ? { caches: manager } : { caches: manager, tiling },
    });
    const module = new Module(task.program, { registry, dataFiles: dataFilesOf(task.program) });
    module.load(options);
    module.loadMethod(METHOD);
    return { module, packs: packingStats().calls };
  };
  const fileBytesPerCycle: number[] = [];
  const packsPerCycle: number[] = [];
  for (let cycle = 0; cycle < task.cycles; cycle++) {
    const { module, packs } = startOnce();
    module.dispose(); // unload: the cache instance is released and closed
    packsPerCycle.push(packs);
    fileBytesPerCycle.push(fileSize(task.cachePath));
  }
  const bytesBeforeSeedChange = fileSize(task.cachePath);
  const changed = startOnce(task.seedChangeTiling);
  const handle = changed.module.methodHandle(METHOD) as XnnpackHandle | XnnpackDelegateHandle;
  const orphanBytesAfterSeedChange = handle.cache.stats().orphanBytes;
  const liveDataBytes = handle.cache.stats().packedBytes;
  changed.module.dispose();
  const bytesAfterSeedChange = fileSize(task.cachePath);
  const compacted = compact(task.cachePath);
  const after = startOnce(task.seedChangeTiling);
  after.module.dispose();
  const result: CyclesResult = {
    fileBytesPerCycle,
    packsPerCycle,
    bytesBeforeSeedChange,
    bytesAfterSeedChange,
    packsAtSeedChange: changed.packs,
    orphanBytesAfterSeedChange,
    compact: {
      bytesBefore: compacted.bytesBefore,
      bytesAfter: compacted.bytesAfter,
      entries: compacted.entries,
    },
    packsAfterCompact: after.packs,
    liveDataBytes,
  };
  send('result', result);
}

function pack(task: Extract<ChildTask, { kind: 'pack' }>): void {
  const { layers, dim } = task;
  const map = new InMemoryNamedDataMap();
  for (let layer = 0; layer < layers; layer++) {
    const weight = fillWeights(new Float32Array(dim * dim), layer + 1, 1);
    const bias = fillWeights(new Float32Array(dim), 100_000 + layer, 1);
    map.set(tensorView(`l${layer}.weight`, [dim, dim], weight));
    map.set(tensorView(`l${layer}.bias`, [dim], bias));
  }
  resetPackingStats();
  const roundsMs: number[] = [];
  for (let round = 0; round < task.rounds; round++) {
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime(map);
    const start = nowMs();
    for (let layer = 0; layer < layers; layer++) {
      createFullyConnectedNcF32({
        cache,
        inputChannels: dim,
        outputChannels: dim,
        kernel: cache.loadUnpackedData(`l${layer}.weight`),
        bias: cache.loadUnpackedData(`l${layer}.bias`),
      });
    }
    roundsMs.push(nowMs() - start);
    cache.deletePackedData(cache.finalizeForRuntime());
    cache.close();
  }
  const result: PackResult = {
    roundsMs,
    packCalls: packingStats().calls,
    unpackedBytes: layers * (dim * dim + dim) * 4,
  };
  send('result', result);
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? '{}') as ChildTask;
  if (task.kind === 'load') await load(task);
  else if (task.kind === 'cycles') cycles(task);
  else if (task.kind === 'floor') send('result', measureFloor(task.cachePath));
  else if (task.kind === 'allocations') {
    send(
      'result',
      task.what === 'warm'
        ? await measureWarmAllocations(task.program, task.cachePath, task.method)
        : await measureFloorAllocations(task.cachePath),
    );
  } else pack(task);
  process.exit(0);
}

main().catch((error: unknown) => {
  send('error', {
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exit(1);
});
