// The comparison as rows of figures, each memlayer's and onnxruntime-node's from the same
// run: printed as a table by versus-ort.ts, turned into report figures by section.ts.
import { MiB } from '../measure.js';
import { ORT_STARTS, type OrtStartKind } from './ort-sessions.js';
import type { VersusResults } from './results.js';

export interface VersusRow {
  readonly metric: string;
  readonly unit: 'ms' | 'MiB';
  /** One value per fresh process (or per measurement); null: not measurable here. */
  readonly memlayer: readonly number[] | null;
  readonly ort: readonly number[] | null;
  /** Shown in place of a null side. */
  readonly missing?: string;
  readonly method: string;
  /** A headline ratio (the report's chart). */
  readonly main: boolean;
}

const ORT_START_NAMES: Record<OrtStartKind, string> = {
  plain: 'ONNX + external data',
  optimized: 'optimized model file',
  prepacked: 'optimized model file + prepacked weights',
};

export function ortStartName(kind: OrtStartKind): string {
  return ORT_START_NAMES[kind];
}

/** What the 2-thread row of memlayer stands on. */
export function threadsNote(results: VersusResults): string {
  return results.threads.available
    ? "memlayer's 2-thread row passes { threads: 2 } to Module (the installed module-loader takes it)."
    : `memlayer's 2-thread row is n/a: the installed module-loader has no \`threads\` Module option (${results.threads.reason}).`;
}

export function versusRows(results: VersusResults): VersusRow[] {
  const { memlayer, ort, batch, processes } = results;
  const best = ort.best;
  const fresh = `one fresh process per round, ${results.rounds} round${results.rounds === 1 ? '' : 's'}, memlayer's and onnxruntime-node's interleaved`;
  const warmOf = `warm starts (memlayer: cache file committed by an earlier process; onnxruntime-node: ${ORT_START_NAMES[best]}, its fastest warm start)`;
  const steadyMethod = (threads: number) =>
    `median time of one forward after one untimed forward of that batch size, in ${warmOf}, ${threads} thread${threads === 1 ? '' : 's'} (memlayer: ${threads === 1 ? 'Module default' : 'Module option threads: 2'}; onnxruntime-node: intraOpNumThreads ${threads}); ${fresh}`;
  const rows: VersusRow[] = [
    {
      metric: 'import',
      unit: 'ms',
      memlayer: memlayer.importMs,
      ort: ort.importMs,
      method: `await import('@memlayer/module-loader') vs require('onnxruntime-node'), the first load of either in its process; ${fresh}`,
      main: false,
    },
    {
      metric: 'ready, cold',
      unit: 'ms',
      memlayer: memlayer.coldMs,
      ort: ort.coldMs,
      method: `memlayer: cache file deleted, new Module(.pte, .ptd) + load + loadMethod (every layer packed, the cache file written); onnxruntime-node: InferenceSession.create of the ONNX model (graph optimized, weights prepacked on the heap); ${fresh}`,
      main: false,
    },
  ];
  for (const kind of ['optimized', 'prepacked'] as const) {
    rows.push({
      metric: `ready, cold, saving what a warm start reuses (ORT: ${ORT_START_NAMES[kind]})`,
      unit: 'ms',
      memlayer: memlayer.coldMs,
      ort: ort.coldSavingMs[kind],
      method: `memlayer: the cold start above (it writes the cache file); onnxruntime-node: InferenceSession.create of the ONNX model saving the ${ORT_START_NAMES[kind]} (optimizedModelFilePath + external initializers file${kind === 'prepacked' ? ' + session.save_external_prepacked_constant_initializers' : ''}); ${fresh}`,
      main: false,
    });
  }
  rows.push({
    metric: `ready, warm (ORT: its fastest, ${ORT_START_NAMES[best]})`,
    unit: 'ms',
    memlayer: memlayer.warmMs,
    ort: ort.warmMs[best],
    method: `memlayer: new Module + load + loadMethod with the cache file an earlier process committed; onnxruntime-node: InferenceSession.create of the ${ORT_START_NAMES[best]}, the fastest median among ${ORT_STARTS.map((kind) => ORT_START_NAMES[kind]).join(', ')}; ${fresh}`,
    main: true,
  });
  for (const kind of ORT_STARTS.filter((kind) => kind !== best)) {
    rows.push({
      metric: `ready, warm (ORT: ${ORT_START_NAMES[kind]})`,
      unit: 'ms',
      memlayer: memlayer.warmMs,
      ort: ort.warmMs[kind],
      method: `as the warm row above, onnxruntime-node opening the ${ORT_START_NAMES[kind]}; ${fresh}`,
      main: false,
    });
  }
  rows.push(
    {
      metric: 'process start → first output (warm)',
      unit: 'ms',
      memlayer: memlayer.firstOutputMs,
      ort: ort.firstOutputMs,
      method: `performance.now() (counted from the process's start) when the first forward's output is there: Node start, import, warm start, forward of batch 1, in ${warmOf}; ${fresh}`,
      main: true,
    },
    {
      metric: 'first forward, batch 1',
      unit: 'ms',
      memlayer: memlayer.firstForwardMs,
      ort: ort.firstForwardMs,
      method: `the first forward of a warm start (packed weights touched for the first time), ${warmOf}; ${fresh}`,
      main: false,
    },
    {
      metric: 'forward, batch 1, steady, 1 thread',
      unit: 'ms',
      memlayer: memlayer.steadyMs,
      ort: ort.steadyMs,
      method: steadyMethod(1),
      main: true,
    },
    {
      metric: `forward, batch ${batch}, steady, 1 thread`,
      unit: 'ms',
      memlayer: memlayer.batchedMs,
      ort: ort.batchedMs,
      method: steadyMethod(1),
      main: false,
    },
    {
      metric: `forward, batch ${batch}, steady, 2 threads`,
      unit: 'ms',
      memlayer: memlayer.batchedTwoThreadsMs,
      ort: ort.batchedTwoThreadsMs,
      missing: 'n/a (option not available)',
      method: steadyMethod(2),
      main: false,
    },
  );
  const lowestPss = [...ORT_STARTS].sort((a, b) => ort.pss[a].loaded - ort.pss[b].loaded)[0];
  for (const kind of ORT_STARTS) {
    rows.push({
      metric: `sum of PSS, ${processes} processes holding the model (ORT: ${ORT_START_NAMES[kind]})`,
      unit: 'MiB',
      memlayer: [memlayer.pss.loaded / MiB],
      ort: [ort.pss[kind].loaded / MiB],
      method: `sum of Pss in /proc/<pid>/smaps_rollup of ${processes} concurrent processes once each has made a warm start and run one forward (started one after the other; memlayer: one shared cache file); includes each Node process (summed before importing anything: memlayer ${(memlayer.pss.idle / MiB).toFixed(0)} MiB, onnxruntime-node ${(ort.pss[kind].idle / MiB).toFixed(0)} MiB)`,
      main: kind === lowestPss,
    });
  }
  return rows;
}
