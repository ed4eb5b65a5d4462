import { formatAdvantage } from './numbers.js';
import { type BenchReport, machineLine } from './report.js';

const WIDTH = 900;
const LABEL_WIDTH = 360;
const ROW = 26;
const TOP = 70;
/** The bar axis spans 1/1000x .. 1000x on a log scale. */
const DECADES = 3;

const xmlEscape = (text: string) =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

/** Bars of the main ratios (log scale, 1x in the middle): right of it memlayer is better. */
export function ratiosSvg(report: BenchReport): string {
  const bars = report.sections.flatMap((section) => section.comparisons.filter((c) => c.main));
  const plotLeft = LABEL_WIDTH + 10;
  const plotWidth = WIDTH - plotLeft - 150;
  const center = plotLeft + plotWidth / 2;
  const scale = plotWidth / 2 / DECADES;
  const height = TOP + Math.max(bars.length, 1) * ROW + 50;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>memlayer bench: main ratios, memlayer vs its peers</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">memlayer bench: main ratios${report.quick ? ' (--quick)' : ''}</text>`,
    `<text x="10" y="40" fill="#555">${xmlEscape(machineLine(report.machine))}</text>`,
    `<text x="10" y="56" fill="#555">log scale; right of 1x memlayer is better, left of it the peer is better; measured side by side in one run</text>`,
  ];
  for (let decade = -DECADES; decade <= DECADES; decade++) {
    const x = center + decade * scale;
    parts.push(
      `<line x1="${x}" y1="${TOP - 6}" x2="${x}" y2="${height - 40}" stroke="${decade === 0 ? '#333' : '#ddd'}"/>`,
      `<text x="${x}" y="${height - 26}" text-anchor="middle" fill="#555">${10 ** decade}x</text>`,
    );
  }
  bars.forEach((bar, index) => {
    const y = TOP + index * ROW;
    const finite = Number.isFinite(bar.advantage) && bar.advantage > 0;
    const log = finite ? Math.max(-DECADES, Math.min(DECADES, Math.log10(bar.advantage))) : DECADES;
    const end = center + log * scale;
    const color =
      bar.verdict === 'worse' ? '#c0392b' : bar.verdict === 'equal' ? '#7f8c8d' : '#27ae60';
    parts.push(
      `<text x="${LABEL_WIDTH}" y="${y + 15}" text-anchor="end">${xmlEscape(bar.label)}</text>`,
      `<rect x="${Math.min(center, end)}" y="${y + 4}" width="${Math.max(Math.abs(end - center), 1)}" height="${ROW - 8}" fill="${color}"/>`,
      `<text x="${plotLeft + plotWidth + 8}" y="${y + 15}" fill="${color}">${xmlEscape(formatAdvantage(bar.advantage))}</text>`,
    );
  });
  if (bars.length === 0)
    parts.push(
      `<text x="${center}" y="${TOP + 15}" text-anchor="middle">no comparisons measured</text>`,
    );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
