import type { Segment, SegmentKind } from './analyze.js';
import { formatBytes } from './format.js';

const FILL: Record<SegmentKind, string> = {
  header: '#4aa3df',
  live: '#3cb371',
  padding: '#a8dfb8',
  trailer: '#f0b429',
  'old-trailer': '#c7b98a',
  orphan: '#e05252',
  'dead-tail': '#8b1e1e',
};

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The file layout as an SVG picture: one bar, proportional widths, a legend, titles on hover. */
export function renderLayoutSvg(segments: Segment[], fileSize: number, title: string): string {
  const width = 960;
  const barY = 40;
  const barHeight = 48;
  const scale = (bytes: number) => (bytes / Math.max(fileSize, 1)) * width;
  const rects = segments.map((segment) => {
    const x = scale(segment.start);
    // Keep tiny segments visible: at least half a pixel wide.
    const w = Math.max(scale(segment.end - segment.start), 0.5);
    const label = `${segment.label}: [${segment.start}, ${segment.end}) ${formatBytes(segment.end - segment.start)}`;
    return `  <rect x="${x.toFixed(2)}" y="${barY}" width="${w.toFixed(2)}" height="${barHeight}" fill="${FILL[segment.kind]}"><title>${escapeXml(label)}</title></rect>`;
  });
  const kinds = [...new Set(segments.map((segment) => segment.kind))];
  const legend = kinds.map((kind, index) => {
    const x = 10 + index * 150;
    return `  <rect x="${x}" y="110" width="14" height="14" fill="${FILL[kind]}"/><text x="${x + 20}" y="122" font-size="13">${kind}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width + 20}" height="140" viewBox="-10 0 ${width + 20} 140" font-family="sans-serif">`,
    `  <title>${escapeXml(`Layout of ${title}`)}</title>`,
    `  <text x="0" y="24" font-size="15">${escapeXml(title)} (${formatBytes(fileSize)})</text>`,
    ...rects,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}
