import { crc32cOf } from '@memlayer/cache-format';
import { DeviceRunner } from '@memlayer/device-runner';
import {
  type AscendSimHandle,
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  type Tensor,
  type WeightStats,
  type XnnpackHandle,
} from '@memlayer/module-loader';
import {
  type CpuFeatures,
  describeCpuFeatures,
  packingStats,
  XNNWeightsCacheManager,
} from '@memlayer/xnnpack-cache';
import { type ByteProgress, SILENT_PROGRESS } from './progress.js';

export interface RunProgramOptions {
  /** A JSON program or an ExecuTorch .pte. */
  programPath: string;
  /** .ptd files of a .pte program. */
  dataFiles?: readonly string[];
  /** packed_cache_path: '' = heap-only cache. */
  cachePath: string;
  /** Method to run; the first method of the program when omitted. */
  method?: string;
  batch: number;
  /** Inputs as flat arrays; deterministic inputs when omitted. */
  inputs?: Float32Array[];
  repeat: number;
  /** Threads each layer may share (the Module's `threads`; default 1). */
  threads?: number;
  /** Disk budget of the cache file in MiB (packed_cache_max_mib); 0 or absent: none. */
  maxMib?: number;
  /** Draws packing progress (default: none). */
  progress?: (label: string, totalBytes: number) => ByteProgress;
  /** Format of a new cache file: 3 (default) or 2 (what ExecuTorch reads and writes). */
  cacheFormat?: 2 | 3;
  /**
   * The CPU whose XNNPACK kernels tile each layer (null: unknown, nr8kr1sr1); the running
   * one when omitted.
   */
  cpuFeatures?: CpuFeatures | null;
}

export interface RunReport {
  program: string;
  method: string;
  backend: string;
  cachePath: string;
  /** The CPU the layers were tiled for ("none": unknown) and where that came from. */
  cpu: { features: string; source: string };
  timings: { loadMs: number; initMs: number; executeMs: number; unloadMs: number };
  packs: number;
  packedBytesPacked: number;
  operators: number;
  cacheHits: number;
  cache: {
    entries: number;
    packedBytes: number;
    fileBytes: number;
    orphanBytes: number;
    mappedBytes: number;
    heapBytes: number;
    dirtyBytes: number;
    cleanBytes: number;
    memoryMeasured: boolean;
    /** Bytes and counts that went to the heap instead of the file, per reason. */
    fallback: Readonly<Record<string, { count: number; bytes: number }>>;
    /** Disk budget of the cache file (null: none). */
    maxFileBytes: number | null;
    /** Entries evicted to keep the file within its budget, when the cache closed at unload. */
    evicted: { entries: number; bytes: number };
  } | null;
  /** What loading the weights cost: files statted, opened, hashed; bytes hashed and mapped. */
  weights: WeightStats | null;
  device: { bytesUploaded: number; committedBytes: number; committedAfterUnload: number } | null;
  outputs: { shape: [number, number]; crc32c: number; first: number[] }[];
}

/** Deterministic inputs in [-1, 1): the same program gives the same outputs in any process. */
export function deterministicInput(rows: number, columns: number, seed = 1): Float32Array {
  const out = new Float32Array(rows * columns);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    out[i] = state / 2 ** 31 - 1;
  }
  return out;
}

const now = () => performance.now();

/**
 * Loads a program through the module loader with a file-backed weights cache, runs one
 * method and unloads, measuring each step. Packing counts come from the packing counters,
 * memory from the cache's mappings (/proc/self/smaps) right after the method is ready.
 */
export function runProgram(options: RunProgramOptions): RunReport {
  const manager = new XNNWeightsCacheManager({
    ...(options.cacheFormat === undefined ? {} : { format: options.cacheFormat }),
    ...(options.cpuFeatures === undefined ? {} : { cpuFeatures: options.cpuFeatures }),
  });
  const runner = new DeviceRunner();
  let progress: ByteProgress | undefined;
  let reported = 0;
  const registry = createDefaultRegistry({
    xnnpack: {
      caches: manager,
      onOperatorCreated: (event) => {
        progress ??= options.progress?.('pack', event.totalWeightBytes) ?? SILENT_PROGRESS;
        progress.advance(event.weightBytes - reported);
        reported = event.weightBytes;
      },
    },
    ascend: { runner },
  });
  const module = new Module(options.programPath, {
    registry,
    dataFiles: options.dataFiles ?? [],
    threads: options.threads ?? 1,
  });
  const backendOptions = new LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new BackendOptions()
      .setOption('packed_cache_path', options.cachePath)
      .setOption('save_weight_cache_on_disk', options.cachePath !== '')
      .setOption('packed_cache_max_mib', options.maxMib ?? 0),
  );
  const started = now();
  module.load(backendOptions);
  const loaded = now();
  const method = options.method ?? (module.methodNames()[0] as string);
  const packsBefore = packingStats();
  const deviceBaseline = runner.stats().committedBytes;
  try {
    module.loadMethod(method);
  } finally {
    progress?.stop();
  }
  const initialized = now();
  const packsAfter = packingStats();
  const handle = module.methodHandle(method) as Partial<XnnpackHandle & AscendSimHandle>;
  const meta = module.methodMeta(method);
  const inputs = meta.inputs.map((sizes, index): Tensor => {
    // The last size is the features; the batch is chosen here.
    const features = sizes[sizes.length - 1] ?? 0;
    const data = options.inputs?.[index] ?? deterministicInput(options.batch, features, index + 1);
    return { shape: [data.length / features, features], data };
  });
  let outputs: Tensor[] = [];
  const executeStart = now();
  for (let round = 0; round < options.repeat; round++) outputs = module.execute(method, inputs);
  const executed = now();
  const operators = handle.operators?.size ?? 0;
  const cache = handle.cache;
  const stats = cache?.stats();
  const memory = cache?.memoryStats();
  const device = handle.callable
    ? { bytesUploaded: handle.bytesUploaded ?? 0, committedBytes: runner.stats().committedBytes }
    : null;
  const unloadStart = now();
  module.dispose();
  const unloaded = now();
  // The cache closed with the module: a file over its budget was compacted then.
  const evicted = cache?.stats().evicted ?? { entries: 0, bytes: 0 };
  return {
    program: options.programPath,
    method,
    backend: meta.backends.join(', ') || '?',
    cachePath: options.cachePath,
    cpu: {
      features: describeCpuFeatures(manager.cpuFeatures.features),
      source: manager.cpuFeatures.source,
    },
    timings: {
      loadMs: loaded - started,
      initMs: initialized - loaded,
      executeMs: (executed - executeStart) / Math.max(options.repeat, 1),
      unloadMs: unloaded - unloadStart,
    },
    packs: packsAfter.calls - packsBefore.calls,
    packedBytesPacked: packsAfter.bytes - packsBefore.bytes,
    operators,
    cacheHits: handle.cacheHits ?? 0,
    weights: handle.weightStats ?? null,
    cache:
      stats && memory
        ? {
            entries: stats.entries,
            packedBytes: stats.packedBytes,
            fileBytes: stats.fileBytes,
            orphanBytes: stats.orphanBytes,
            mappedBytes: stats.mappedBytes,
            heapBytes: stats.heapBytes,
            dirtyBytes: memory.dirtyBytes,
            cleanBytes: memory.cleanBytes,
            memoryMeasured: memory.available,
            fallback: stats.fallback ?? {},
            maxFileBytes: stats.maxFileBytes ?? null,
            evicted,
          }
        : null,
    device: device && {
      ...device,
      committedAfterUnload: runner.stats().committedBytes - deviceBaseline,
    },
    outputs: outputs.map((output) => ({
      shape: output.shape,
      crc32c: crc32cOf(
        new Uint8Array(output.data.buffer, output.data.byteOffset, output.data.byteLength),
      ),
      first: [...output.data.subarray(0, 4)],
    })),
  };
}
