import type { MachineDescription } from './machine.js';
import { formatAdvantage, formatValue } from './numbers.js';
import type { Comparison, SectionResult } from './types.js';

export interface BenchReport {
  readonly tool: string;
  readonly quick: boolean;
  readonly machine: MachineDescription;
  readonly seconds: number;
  readonly sections: SectionResult[];
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function row(cells: string[]): string {
  return `| ${cells.map(cell).join(' | ')} |`;
}

export function machineLine(machine: MachineDescription): string {
  return `${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB RAM, Node ${machine.node} (${machine.platform}, kernel ${machine.kernel}), load average ${machine.loadAverage1m.toFixed(2)} at start, ${machine.date}`;
}

function verdictText(comparison: Comparison): string {
  if (comparison.verdict === 'worse') {
    return `WORSE: ${comparison.peer.name} is ${formatValue(1 / comparison.advantage)}x better`;
  }
  return comparison.verdict === 'equal' ? 'equal' : 'better';
}

function comparisonRows(comparisons: readonly Comparison[], withMethod: boolean): string[] {
  const headers = ['comparison', 'memlayer', 'peer', 'ratio', 'verdict'];
  if (withMethod) headers.push('how it was measured');
  return [
    row(headers),
    row(headers.map((_, i) => (i === 3 ? '---:' : '---'))),
    ...comparisons.map((c) => {
      const cells = [
        c.label,
        `${c.ours.name}: ${formatValue(c.ours.value)} ${c.unit}`,
        `${c.peer.name}: ${formatValue(c.peer.value)} ${c.unit}`,
        formatAdvantage(c.advantage),
        verdictText(c),
      ];
      if (withMethod) cells.push(c.method);
      return row(cells);
    }),
  ];
}

/** One section as markdown: a status line, figures, comparisons, notes. */
export function sectionMarkdown(section: SectionResult): string {
  const lines = [`## ${section.title}`, ''];
  if (section.status !== 'measured') {
    lines.push(`**${section.status}**: not measured: ${section.reason ?? 'no reason given'}`, '');
  } else {
    lines.push(`_measured in ${section.seconds.toFixed(1)} s_`, '');
  }
  if (section.figures.length > 0) {
    lines.push(
      row(['figure', 'value', 'unit', 'how it was measured']),
      row(['---', '---:', '---', '---']),
      ...section.figures.map((f) => row([f.label, formatValue(f.value), f.unit, f.method])),
      '',
    );
  }
  if (section.comparisons.length > 0) lines.push(...comparisonRows(section.comparisons, true), '');
  for (const note of section.notes) lines.push(`- ${note}`);
  if (section.notes.length > 0) lines.push('');
  return lines.join('\n');
}

export function reportMarkdown(report: BenchReport): string {
  const main = report.sections.flatMap((section) => section.comparisons.filter((c) => c.main));
  const worse = report.sections.flatMap((section) =>
    section.comparisons.filter((c) => c.verdict === 'worse'),
  );
  const lines = [
    `# memlayer bench${report.quick ? ' (--quick)' : ''}`,
    '',
    `Machine: ${machineLine(report.machine)}. Run took ${report.seconds.toFixed(0)} s.`,
    '',
    'Every ratio compares two figures measured side by side in this one run (the machine is shared and noisy: compare ratios, not absolute times across runs). Each figure says how it was measured.',
    '',
  ];
  if (main.length > 0) lines.push('## Main ratios', '', ...comparisonRows(main, false), '');
  if (worse.length > 0) {
    lines.push(
      'Where memlayer is worse than the peer:',
      '',
      ...worse.map((c) => `- ${c.label}: ${verdictText(c)}.`),
      '',
    );
  }
  for (const section of report.sections) lines.push(sectionMarkdown(section));
  return `${lines.join('\n').trimEnd()}\n`;
}

export function reportJson(report: BenchReport): string {
  // Infinity and NaN are not JSON: they become null.
  return `${JSON.stringify(report, (_, value) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`;
}
