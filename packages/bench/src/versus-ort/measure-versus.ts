// The comparison's measurements, in three passes over fresh child processes: starts (cold
// and warm, memlayer's and onnxruntime-node's interleaved in each round), forwards of the
// warm starts (interleaved likewise), then PSS of concurrent processes holding the model.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BenchChild, runInChild } from '../children.js';
import { median } from '../measure.js';
import { pssOfHeldChildren } from '../memory.js';
import type { ModelSpec } from '../types.js';
import { outputAgreement } from './agreement.js';
import type { VersusFiles } from './files.js';
import {
  loadOptions,
  ORT_STARTS,
  type OrtStartKind,
  ortFiles,
  saveOptions,
} from './ort-sessions.js';
import type { MemlayerStart, OrtStart, VersusResult, VersusTask } from './protocol.js';
import type { PssFigure, VersusResults } from './results.js';
import type { ThreadsOption } from './threads-option.js';

/** The built child script, also when this module runs from its TypeScript source. */
const VERSUS_CHILD = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.ts') ? '../../dist/versus-ort/child.js' : './child.js',
    import.meta.url,
  ),
);

const SAVED_STARTS = ['optimized', 'prepacked'] as const;

export interface VersusConfig {
  readonly spec: ModelSpec;
  readonly rounds: number;
  readonly files: VersusFiles;
  readonly threads: ThreadsOption;
  /** Milliseconds of timed forwards per batch size and process. */
  readonly steadyBudgetMs: number;
  /** Batch size of the batched forward rows. */
  readonly batch: number;
  /** How many processes hold the model at once in the PSS measurement. */
  readonly processes: number;
  readonly progress: (message: string) => void;
}

/** How the passes start children: tasks and starts of one configuration. */
function starter(config: VersusConfig) {
  const { files } = config;
  const task = (
    start: MemlayerStart | OrtStart,
    more: Partial<Pick<VersusTask, 'steadyBatches' | 'mappedFiles' | 'hold'>> = {},
  ): VersusTask => ({
    kind: 'versus',
    start,
    dim: config.spec.dim,
    steadyBatches: more.steadyBatches ?? [],
    steadyBudgetMs: config.steadyBudgetMs,
    mappedFiles: more.mappedFiles ?? [],
    hold: more.hold ?? false,
  });
  return {
    task,
    run: (versusTask: VersusTask) => runInChild<VersusResult>(versusTask, VERSUS_CHILD),
    hold: (start: MemlayerStart | OrtStart) =>
      new BenchChild(task(start, { hold: true }), VERSUS_CHILD),
    memlayer: (threads?: number): MemlayerStart => ({
      engine: 'memlayer',
      pte: files.pte,
      ptd: files.ptd,
      cachePath: files.cachePath,
      ...(threads === undefined ? {} : { threads }),
    }),
    ort: (kind: OrtStartKind, threads = 1): OrtStart => ({
      engine: 'ort',
      model: ortFiles(files.onnxDir, files.onnx, kind).model,
      options: loadOptions(kind, threads),
    }),
    ortSaving: (kind: (typeof SAVED_STARTS)[number]): OrtStart => ({
      engine: 'ort',
      model: files.onnx.model,
      options: saveOptions(kind, ortFiles(files.onnxDir, files.onnx, kind), 1),
    }),
  };
}

/** Per round: both engines cold (nothing either saved survives), then warm. */
async function measureStarts(config: VersusConfig) {
  const { files, spec } = config;
  const start = starter(config);
  const memlayer = { cold: [] as VersusResult[], warm: [] as VersusResult[] };
  const ort = {
    cold: [] as VersusResult[],
    coldSaving: { optimized: [] as VersusResult[], prepacked: [] as VersusResult[] },
    warm: { plain: [], optimized: [], prepacked: [] } as Record<OrtStartKind, VersusResult[]>,
  };
  for (let round = 0; round < config.rounds; round++) {
    config.progress(`${spec.label}: starts, round ${round + 1} of ${config.rounds}`);
    rmSync(files.cachePath, { force: true });
    for (const kind of SAVED_STARTS) {
      const saved = ortFiles(files.onnxDir, files.onnx, kind);
      rmSync(saved.model, { force: true });
      rmSync(saved.data, { force: true });
    }
    memlayer.cold.push(await start.run(start.task(start.memlayer())));
    ort.cold.push(await start.run(start.task(start.ort('plain'))));
    for (const kind of SAVED_STARTS) {
      ort.coldSaving[kind].push(await start.run(start.task(start.ortSaving(kind))));
    }
    const memlayerMapped = [files.cachePath, files.ptd];
    memlayer.warm.push(
      await start.run(start.task(start.memlayer(), { mappedFiles: memlayerMapped })),
    );
    for (const kind of ORT_STARTS) {
      const mappedFiles = [ortFiles(files.onnxDir, files.onnx, kind).data];
      ort.warm[kind].push(await start.run(start.task(start.ort(kind), { mappedFiles })));
    }
  }
  return { memlayer, ort };
}

/** Per round: steady forwards of warm starts, 1 thread then 2, memlayer's then ORT's. */
async function measureForwards(config: VersusConfig, best: OrtStartKind) {
  const start = starter(config);
  const steadyOf = (result: VersusResult, batch: number) =>
    result.steady.find((forward) => forward.batch === batch)?.ms ?? Number.NaN;
  const out = {
    memlayer: { steady: [] as number[], batched: [] as number[], twoThreads: [] as number[] },
    ort: { steady: [] as number[], batched: [] as number[], twoThreads: [] as number[] },
  };
  const oneThread = { steadyBatches: [1, config.batch] };
  const twoThreads = { steadyBatches: [config.batch] };
  for (let round = 0; round < config.rounds; round++) {
    config.progress(`${config.spec.label}: forwards, round ${round + 1} of ${config.rounds}`);
    for (const [engine, result] of [
      ['memlayer', await start.run(start.task(start.memlayer(), oneThread))],
      ['ort', await start.run(start.task(start.ort(best), oneThread))],
    ] as const) {
      out[engine].steady.push(steadyOf(result, 1));
      out[engine].batched.push(steadyOf(result, config.batch));
    }
    if (config.threads.available) {
      const result = await start.run(start.task(start.memlayer(2), twoThreads));
      out.memlayer.twoThreads.push(steadyOf(result, config.batch));
    }
    const result = await start.run(start.task(start.ort(best, 2), twoThreads));
    out.ort.twoThreads.push(steadyOf(result, config.batch));
  }
  return out;
}

/** PSS of config.processes warm processes of memlayer, then of each ORT start. */
async function measurePss(config: VersusConfig) {
  const start = starter(config);
  config.progress(`${config.spec.label}: PSS of ${config.processes} processes of each engine`);
  const pssOf = (engineStart: MemlayerStart | OrtStart) =>
    pssOfHeldChildren(() => start.hold(engineStart), config.processes);
  const memlayer = await pssOf(start.memlayer());
  const ort = {} as Record<OrtStartKind, PssFigure>;
  for (const kind of ORT_STARTS) ort[kind] = await pssOf(start.ort(kind));
  return { memlayer, ort };
}

export async function measureVersusOrt(config: VersusConfig): Promise<VersusResults> {
  const starts = await measureStarts(config);
  const readyOf = (results: VersusResult[]) => results.map((result) => result.readyMs);
  const warmMs = Object.fromEntries(
    ORT_STARTS.map((kind) => [kind, readyOf(starts.ort.warm[kind])]),
  ) as Record<OrtStartKind, number[]>;
  const best = [...ORT_STARTS].sort(
    (a, b) => median(warmMs[a]) - median(warmMs[b]),
  )[0] as OrtStartKind;
  const forwards = await measureForwards(config, best);
  const pss = await measurePss(config);
  config.progress(`${config.spec.label}: outputs against the JavaScript reference`);
  const memlayerWarm = starts.memlayer.warm;
  const ortBest = starts.ort.warm[best];
  const last = (results: VersusResult[]) => results.at(-1)?.output ?? [];
  return {
    spec: config.spec,
    rounds: config.rounds,
    batch: config.batch,
    processes: config.processes,
    threads: config.threads,
    memlayer: {
      importMs: memlayerWarm.map((result) => result.importMs),
      coldMs: readyOf(starts.memlayer.cold),
      warmMs: readyOf(memlayerWarm),
      firstOutputMs: memlayerWarm.map((result) => result.firstOutputSinceStartMs),
      firstForwardMs: memlayerWarm.map((result) => result.firstForwardMs),
      steadyMs: forwards.memlayer.steady,
      batchedMs: forwards.memlayer.batched,
      batchedTwoThreadsMs: config.threads.available ? forwards.memlayer.twoThreads : null,
      pss: pss.memlayer,
      mappedBytes: memlayerWarm.at(-1)?.mappedBytes ?? 0,
    },
    ort: {
      importMs: ortBest.map((result) => result.importMs),
      coldMs: readyOf(starts.ort.cold),
      coldSavingMs: {
        optimized: readyOf(starts.ort.coldSaving.optimized),
        prepacked: readyOf(starts.ort.coldSaving.prepacked),
      },
      warmMs,
      best,
      firstOutputMs: ortBest.map((result) => result.firstOutputSinceStartMs),
      firstForwardMs: ortBest.map((result) => result.firstForwardMs),
      steadyMs: forwards.ort.steady,
      batchedMs: forwards.ort.batched,
      batchedTwoThreadsMs: forwards.ort.twoThreads,
      pss: pss.ort,
      mappedBytes: Object.fromEntries(
        ORT_STARTS.map((kind) => [kind, starts.ort.warm[kind].at(-1)?.mappedBytes ?? 0]),
      ) as Record<OrtStartKind, number>,
    },
    agreement: outputAgreement(
      config.spec,
      { cold: last(starts.memlayer.cold), warm: last(memlayerWarm) },
      ORT_STARTS.map((kind) => last(starts.ort.warm[kind])),
    ),
  };
}
