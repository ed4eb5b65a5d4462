// What measure-versus.ts measured: per-round values (one fresh process each, round order).
import type { ModelSpec } from '../types.js';
import type { OrtStartKind } from './ort-sessions.js';
import type { ThreadsOption } from './threads-option.js';

export interface PssFigure {
  /** Summed Pss of the processes before they import anything. */
  readonly idle: number;
  /** Summed Pss once every process holds the model ready and has run one forward. */
  readonly loaded: number;
}

export interface EngineFigures {
  readonly importMs: number[];
  readonly coldMs: number[];
  readonly firstOutputMs: number[];
  readonly firstForwardMs: number[];
  readonly steadyMs: number[];
  readonly batchedMs: number[];
  /** null: the engine has no way to run with 2 threads here. */
  readonly batchedTwoThreadsMs: number[] | null;
}

export interface OutputAgreement {
  readonly memlayerVsOrt: number;
  readonly memlayerVsReference: number;
  readonly ortVsReference: number;
  /** The largest |output| of the reference: the scale of the differences. */
  readonly largestOutput: number;
  readonly memlayerColdEqualsWarm: boolean;
}

export interface VersusResults {
  readonly spec: ModelSpec;
  readonly rounds: number;
  readonly batch: number;
  readonly processes: number;
  readonly threads: ThreadsOption;
  readonly memlayer: EngineFigures & {
    readonly warmMs: number[];
    readonly pss: PssFigure;
    /** Bytes of the cache file and .ptd mapped once a warm start is ready. */
    readonly mappedBytes: number;
  };
  readonly ort: EngineFigures & {
    /** Cold starts that also save the files a later start of that kind opens. */
    readonly coldSavingMs: Record<'optimized' | 'prepacked', number[]>;
    readonly warmMs: Record<OrtStartKind, number[]>;
    /** The kind with the lowest median warm start: its processes give the other rows. */
    readonly best: OrtStartKind;
    readonly pss: Record<OrtStartKind, PssFigure>;
    /** Bytes of each kind's external data file mapped once a warm start is ready. */
    readonly mappedBytes: Record<OrtStartKind, number>;
  };
  readonly agreement: OutputAgreement;
}
