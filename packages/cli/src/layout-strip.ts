import type { Segment, SegmentKind } from './analyze.js';
import { style } from './style.js';

/** One character per kind, so the strip reads without color too. */
export const STRIP_GLYPHS: Record<SegmentKind, string> = {
  header: 'H',
  live: '#',
  padding: '+',
  trailer: 'T',
  'old-trailer': 't',
  orphan: '.',
  'dead-tail': '~',
};

const STRIP_STYLES: Partial<Record<SegmentKind, Parameters<typeof style>[1]>> = {
  header: 'cyan',
  live: 'green',
  trailer: 'yellow',
  'old-trailer': 'dim',
  orphan: 'red',
  'dead-tail': 'red',
};

/** Priority when several kinds share one cell: the rarer, more telling kind wins. */
const PRIORITY: SegmentKind[] = [
  'trailer',
  'header',
  'dead-tail',
  'old-trailer',
  'orphan',
  'live',
  'padding',
];

/**
 * Draws the file as `width` cells; each cell shows the kind covering most of its bytes,
 * except that a small trailer or header is never hidden by neighbouring data.
 */
export function renderStrip(
  segments: Segment[],
  fileSize: number,
  width: number,
  color: boolean,
): string {
  const cells: string[] = [];
  const bytesPerCell = Math.max(fileSize / width, 1);
  for (let cell = 0; cell < width && cell * bytesPerCell < fileSize; cell++) {
    const start = cell * bytesPerCell;
    const end = Math.min(fileSize, start + bytesPerCell);
    const cover = new Map<SegmentKind, number>();
    for (const segment of segments) {
      const overlap = Math.min(end, segment.end) - Math.max(start, segment.start);
      if (overlap > 0) cover.set(segment.kind, (cover.get(segment.kind) ?? 0) + overlap);
    }
    let kind: SegmentKind = 'orphan';
    let best = -1;
    for (const [candidate, bytes] of cover) {
      const small = candidate === 'trailer' || candidate === 'header';
      const score = small ? Number.POSITIVE_INFINITY : bytes;
      if (
        score > best ||
        (score === best && PRIORITY.indexOf(candidate) < PRIORITY.indexOf(kind))
      ) {
        best = score;
        kind = candidate;
      }
    }
    const glyph = STRIP_GLYPHS[kind];
    const name = STRIP_STYLES[kind];
    cells.push(name && color ? style(glyph, name, true) : glyph);
  }
  return `|${cells.join('')}|`;
}

export const STRIP_LEGEND =
  'H header  # live data  + page padding  T trailer  t older trailer  . orphan  ~ uncommitted tail';
