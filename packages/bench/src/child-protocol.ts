import type { GemmTiling } from '@memlayer/xnnpack-cache';

/** Prefix of the JSON lines a child writes on stdout for the parent. */
export const CHILD_MESSAGE = '@@memlayer-bench ';

/** What a measurement child process is asked to do (passed as JSON in argv). */
export type ChildTask =
  | {
      readonly kind: 'load';
      readonly program: string;
      /** 'file': file-backed cache at cachePath; 'heap': heap-only cache (packs every start). */
      readonly mode: 'file' | 'heap';
      readonly cachePath: string;
      /** Run one forward pass after the start (checksum of the output; pages become resident). */
      readonly execute: boolean;
      /**
       * Also set save_weight_cache_on_disk = true: the cache file is made durable (data
       * synced, index committed) before the method is runnable. Default: the commit runs
       * after, in the background or at dispose, as a file-backed cache does by itself.
       */
      readonly saveNow?: boolean;
      /**
       * Read the cache's memoryStats() (smaps of its mappings). Costly with one mapping per
       * entry (a cold file-backed start), so only the memory section asks for it.
       */
      readonly cacheMemory: boolean;
      /** Wait for "load" on stdin before loading, and for "exit" after: lets the parent read smaps. */
      readonly hold: boolean;
    }
  | {
      readonly kind: 'cycles';
      readonly program: string;
      readonly cachePath: string;
      readonly cycles: number;
      readonly seedChangeTiling: GemmTiling;
    }
  | {
      /** The floor of a warm start: map the cache file, decode its index, build a table. */
      readonly kind: 'floor';
      readonly cachePath: string;
    }
  | {
      /**
       * Heap bytes allocated by a warm start of `method` or by the floor (allocations.ts),
       * in a child started with ALLOCATION_NODE_FLAGS.
       */
      readonly kind: 'allocations';
      readonly what: 'warm' | 'floor';
      readonly program: string;
      readonly cachePath: string;
      readonly method: string;
    }
  | {
      readonly kind: 'pack';
      readonly layers: number;
      readonly dim: number;
      readonly rounds: number;
    };

export interface LoadResult {
  /** From `new Module` to a method whose operators exist (time to a runnable method). */
  readonly timeToRunnableMs: number;
  /** Module.load alone (manifest + weights mapped). */
  readonly programLoadMs: number;
  /** Module.loadMethod alone (packing or cache look-ups, finalize, save). */
  readonly methodLoadMs: number;
  readonly packCalls: number;
  readonly packedBytesWritten: number;
  readonly cacheHits: number;
  readonly operators: number;
  readonly cacheStats: Record<string, number>;
  /** XNNWeightsCache.memoryStats() after the forward pass (or after finalize without one). */
  readonly memory: Record<string, number | boolean> | null;
  readonly rollupBefore: Record<string, number>;
  /** After loadMethod (finalize done). */
  readonly rollupAfter: Record<string, number>;
  /** After the forward pass, when one ran. */
  readonly rollupAfterRun: Record<string, number> | null;
  readonly outputChecksum: number | null;
  readonly cacheFileBytes: number;
  /** VmHWM once the method is runnable (before any forward pass): the whole process. */
  readonly peakRssBytes: number;
}

export interface CyclesResult {
  readonly fileBytesPerCycle: number[];
  readonly packsPerCycle: number[];
  readonly bytesBeforeSeedChange: number;
  readonly bytesAfterSeedChange: number;
  readonly packsAtSeedChange: number;
  readonly orphanBytesAfterSeedChange: number;
  readonly compact: { bytesBefore: number; bytesAfter: number; entries: number };
  readonly packsAfterCompact: number;
  readonly liveDataBytes: number;
}

export interface PackResult {
  /** Milliseconds to create every operator through a fresh heap cache, per round. */
  readonly roundsMs: number[];
  readonly packCalls: number;
  readonly unpackedBytes: number;
}
