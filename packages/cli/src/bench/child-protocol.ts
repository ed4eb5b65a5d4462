import type { GemmTiling } from '@memlayer/xnnpack-cache';

/** What a measurement child process is asked to do (passed as JSON in argv). */
export type ChildTask =
  | {
      readonly kind: 'load';
      readonly program: string;
      /** 'file': file-backed cache at cachePath; 'heap': heap-only cache (packs every start). */
      readonly mode: 'file' | 'heap';
      readonly cachePath: string;
      readonly execute: boolean;
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
  readonly memory: Record<string, number | boolean> | null;
  readonly rollupBefore: Record<string, number>;
  readonly rollupAfter: Record<string, number>;
  readonly outputChecksum: number | null;
  readonly cacheFileBytes: number;
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
