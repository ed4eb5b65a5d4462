// The comparison as text: a markdown table (median, min–max of each side, their ratio),
// then the outputs' agreement and what was chosen.
import { MiB, median } from '../measure.js';
import { formatValue } from '../numbers.js';
import { loadOptions } from './ort-sessions.js';
import type { VersusResults } from './results.js';
import { ortStartName, threadsNote, type VersusRow, versusRows } from './rows.js';

function cell(values: readonly number[] | null, missing: string): string {
  if (values === null || values.length === 0) return missing;
  const mid = formatValue(median(values));
  if (values.length === 1) return mid;
  return `${mid} (${formatValue(Math.min(...values))}–${formatValue(Math.max(...values))})`;
}

function ratio(row: VersusRow): string {
  if (row.memlayer === null || row.ort === null) return 'n/a';
  return `${(median(row.memlayer) / median(row.ort)).toFixed(2)}x`;
}

export function versusTable(results: VersusResults): string {
  const { spec, agreement, memlayer, ort } = results;
  const weightMiB = (spec.layers * (spec.dim * spec.dim + spec.dim) * 4) / MiB;
  const lines = [
    `${spec.layers} layers of ${spec.dim}x${spec.dim} f32 linear + relu (${formatValue(weightMiB)} MiB of weights); medians (min–max) of ${results.rounds} round${results.rounds === 1 ? '' : 's'} of fresh processes; memlayer/ORT < 1: memlayer lower (faster, smaller)`,
    '',
    '| metric | memlayer | onnxruntime-node | memlayer/ORT |',
    '|---|---:|---:|---:|',
    ...versusRows(results).map(
      (row) =>
        `| ${row.metric} (${row.unit}) | ${cell(row.memlayer, row.missing ?? 'n/a')} | ${cell(row.ort, row.missing ?? 'n/a')} | ${ratio(row)} |`,
    ),
    '',
    `Outputs of one fixed input (batch 1): max |memlayer − ORT| ${agreement.memlayerVsOrt.toExponential(2)}, max |memlayer − JavaScript reference| ${agreement.memlayerVsReference.toExponential(2)}, max |ORT − reference| ${agreement.ortVsReference.toExponential(2)} (largest |output| ${formatValue(agreement.largestOutput)}); memlayer cold and warm outputs bit-identical: ${agreement.memlayerColdEqualsWarm}.`,
    threadsNote(results),
    `onnxruntime-node's fastest warm start: ${ortStartName(ort.best)}, InferenceSession options ${JSON.stringify(loadOptions(ort.best, 1))}.`,
    `Mapped once ready: memlayer cache file + .ptd ${(memlayer.mappedBytes / MiB).toFixed(1)} MiB; onnxruntime-node external data ${Object.entries(
      ort.mappedBytes,
    )
      .map(([kind, bytes]) => `${kind} ${(bytes / MiB).toFixed(1)} MiB`)
      .join(', ')}.`,
  ];
  return `${lines.join('\n')}\n`;
}
