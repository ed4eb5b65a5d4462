// Section 7 of the report: versusRows of each model as figures and comparisons.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MiB, median } from '../measure.js';
import { formatValue } from '../numbers.js';
import { versusOrtModels } from '../sizes.js';
import {
  type BenchOptions,
  type Comparison,
  compare,
  type Figure,
  type SectionBody,
} from '../types.js';
import { prepareVersusFiles } from './files.js';
import { measureVersusOrt } from './measure-versus.js';
import { ortLoadProblem } from './ort-available.js';
import { loadOptions } from './ort-sessions.js';
import type { VersusResults } from './results.js';
import { ortStartName, threadsNote, versusRows } from './rows.js';
import { probeThreadsOption } from './threads-option.js';

const spread = (values: readonly number[]) =>
  values.length < 2
    ? ''
    : ` (min ${formatValue(Math.min(...values))}, max ${formatValue(Math.max(...values))})`;

function modelFigures(results: VersusResults) {
  const label = results.spec.label;
  const figures: Figure[] = [];
  const comparisons: Comparison[] = [];
  const series: Record<string, number[]> = {};
  for (const row of versusRows(results)) {
    for (const [engine, values] of [
      ['memlayer', row.memlayer],
      ['onnxruntime-node', row.ort],
    ] as const) {
      figures.push({
        label: `${label}: ${row.metric}, ${engine}`,
        value: values === null ? null : median(values),
        unit: row.unit,
        method:
          values === null ? `${row.missing ?? 'n/a'}` : `${row.method}; median${spread(values)}`,
      });
      if (values !== null) series[`${label}: ${row.metric}, ${engine}`] = [...values];
    }
    if (row.memlayer === null || row.ort === null) continue;
    comparisons.push(
      compare({
        label: `${label}: ${row.metric}`,
        ours: { name: 'memlayer', value: median(row.memlayer) },
        peer: { name: 'onnxruntime-node', value: median(row.ort) },
        unit: row.unit,
        higherIsBetter: false,
        method: row.method,
        main: row.main,
      }),
    );
  }
  const { agreement } = results;
  const outputs = 'the outputs of one fixed batch-1 input, in the last round';
  figures.push(
    {
      label: `${label}: max |memlayer − onnxruntime-node|`,
      value: agreement.memlayerVsOrt,
      unit: '',
      method: `${outputs}, against each of onnxruntime-node's warm starts`,
    },
    {
      label: `${label}: max |memlayer − JavaScript reference|`,
      value: agreement.memlayerVsReference,
      unit: '',
      method: `${outputs} against mlp-reference.ts (double-precision sums, f32 per layer)`,
    },
    {
      label: `${label}: max |onnxruntime-node − JavaScript reference|`,
      value: agreement.ortVsReference,
      unit: '',
      method: `${outputs} against mlp-reference.ts`,
    },
    {
      label: `${label}: largest |output|`,
      value: agreement.largestOutput,
      unit: '',
      method: 'of the JavaScript reference: the scale of the differences above',
    },
  );
  const mapped = Object.entries(results.ort.mappedBytes)
    .map(([kind, bytes]) => `${kind} ${(bytes / MiB).toFixed(1)} MiB`)
    .join(', ');
  const notes = [
    `${label}: onnxruntime-node's fastest warm start was the ${ortStartName(results.ort.best)}: InferenceSession options ${JSON.stringify(loadOptions(results.ort.best, 1))}. memlayer cold and warm outputs bit-identical: ${agreement.memlayerColdEqualsWarm}.`,
    `${label}: ${threadsNote(results)}`,
    `${label}: mapped once a warm start is ready: memlayer cache file + .ptd ${(results.memlayer.mappedBytes / MiB).toFixed(1)} MiB; onnxruntime-node external data ${mapped}.`,
  ];
  return { figures, comparisons, notes, series };
}

export async function versusOrtSection(options: BenchOptions): Promise<SectionBody> {
  const problem = ortLoadProblem();
  if (problem !== null) {
    return { status: 'skipped', reason: problem, figures: [], comparisons: [], notes: [] };
  }
  const body = {
    figures: [] as Figure[],
    comparisons: [] as Comparison[],
    notes: [] as string[],
    series: {} as Record<string, number[]>,
  };
  for (const { spec, rounds } of versusOrtModels(options.quick)) {
    const dir = join(options.workDir, `versus-ort-${spec.layers}x${spec.dim}`);
    try {
      const files = await prepareVersusFiles(dir, spec, options.progress);
      const results = await measureVersusOrt({
        spec,
        rounds,
        files,
        threads: probeThreadsOption(files.probeProgram),
        steadyBudgetMs: options.quick ? 100 : 1000,
        batch: 64,
        processes: 4,
        progress: options.progress,
      });
      const model = modelFigures(results);
      body.figures.push(...model.figures);
      body.comparisons.push(...model.comparisons);
      body.notes.push(...model.notes);
      Object.assign(body.series, model.series);
    } finally {
      // Both engines' files of the 1 GiB model take about 7 GiB.
      rmSync(dir, { recursive: true, force: true });
    }
  }
  body.notes.push(
    'Each engine imports only itself in its processes. Every layer is Gemm (transB = 1) + Relu in ONNX, linear + relu (fused at export) in the .pte; the same weight bytes. onnxruntime-node runs with intraOpNumThreads 1 (2 in the 2-thread row), interOpNumThreads 1, sequential execution.',
  );
  return body;
}
