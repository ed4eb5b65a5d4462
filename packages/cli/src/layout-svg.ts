import type { CacheReport, Segment, SegmentKind } from './analyze.js';
import { displayEntryName } from './entry-rows.js';
import { formatBytes } from './format.js';

/** Colours chosen to stay apart for the common colour-vision deficiencies (Okabe-Ito). */
const FILL: Record<SegmentKind, string> = {
  header: '#0072b2',
  live: '#009e73',
  padding: '#a6dcc8',
  trailer: '#e69f00',
  'old-trailer': '#c9b37a',
  orphan: '#d55e00',
  'dead-tail': '#7a1f00',
};

const KIND_NAMES: Record<SegmentKind, string> = {
  header: 'header',
  live: 'live data',
  padding: 'page padding',
  trailer: 'live trailer',
  'old-trailer': 'older trailers',
  orphan: 'orphans',
  'dead-tail': 'uncommitted tail',
};

const ORDER: SegmentKind[] = [
  'header',
  'live',
  'padding',
  'trailer',
  'old-trailer',
  'orphan',
  'dead-tail',
];

/** Small kinds a reader must always see: never drawn narrower than this many pixels. */
const MIN_WIDTH: Record<SegmentKind, number> = {
  header: 14,
  live: 3,
  padding: 1,
  trailer: 14,
  'old-trailer': 8,
  orphan: 3,
  'dead-tail': 8,
};

const BAR_WIDTH = 960;
const BAR_Y = 104;
const BAR_HEIGHT = 44;
const LEFT = 20;
const CHAR_PX = 7.2; // a generous average advance of 11 px DejaVu Sans (digits are wide), for fitting labels

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function truncate(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return chars <= 1 ? '…' : `${text.slice(0, chars - 1)}…`;
}

/** Kinds whose minimum width always applies: a file has only a few of them. */
const ALWAYS_VISIBLE = new Set<SegmentKind>(['header', 'trailer', 'old-trailer', 'dead-tail']);

/**
 * Widths in pixels: proportional to bytes, except that no segment is narrower than its
 * kind's minimum; the others shrink to make room, so the bar keeps its total width. With
 * many small entries their minimums would not fit: then only the few always-visible kinds
 * keep theirs.
 */
function segmentWidths(segments: Segment[]): number[] {
  const all = segments.map((segment) => MIN_WIDTH[segment.kind]);
  const few = segments.map((segment) =>
    ALWAYS_VISIBLE.has(segment.kind) ? MIN_WIDTH[segment.kind] : 0,
  );
  const total = (minimum: number[]) => minimum.reduce((sum, px) => sum + px, 0);
  const minimum =
    total(all) <= BAR_WIDTH / 3 ? all : total(few) <= BAR_WIDTH / 3 ? few : segments.map(() => 0);
  // Widen what is too small, shrink the rest; repeat while that makes more segments too small.
  let widened = new Set<number>();
  const scaleFor = (fixed: Set<number>) => {
    const fixedPx = [...fixed].reduce((sum, i) => sum + (minimum[i] as number), 0);
    const freeBytes = segments.reduce(
      (sum, segment, i) => (fixed.has(i) ? sum : sum + segment.end - segment.start),
      0,
    );
    return (BAR_WIDTH - fixedPx) / Math.max(freeBytes, 1);
  };
  for (let pass = 0; pass < 8; pass++) {
    const scale = scaleFor(widened);
    const next = new Set(
      segments.flatMap((segment, i) =>
        (segment.end - segment.start) * scale < (minimum[i] as number) ? [i] : [],
      ),
    );
    for (const i of widened) next.add(i);
    if (next.size === widened.size) break;
    widened = next;
  }
  const scale = scaleFor(widened);
  return segments.map((segment, i) =>
    widened.has(i) ? (minimum[i] as number) : (segment.end - segment.start) * scale,
  );
}

/** Byte offset → x, piecewise linear through the (possibly widened) segments. */
function byteToX(segments: Segment[], xs: number[], widths: number[], byte: number): number {
  for (const [i, segment] of segments.entries()) {
    if (byte <= segment.end) {
      const share = (byte - segment.start) / Math.max(segment.end - segment.start, 1);
      return (xs[i] as number) + Math.max(0, share) * (widths[i] as number);
    }
  }
  return LEFT + BAR_WIDTH;
}

/** Byte offsets of the axis ticks: 0, round steps, and the end of the file. */
function axisTicks(fileSize: number): number[] {
  const step = tickStep(fileSize);
  const ticks: number[] = [];
  for (let byte = 0; byte < fileSize; byte += step) ticks.push(byte);
  ticks.push(fileSize);
  return ticks;
}

/** Round tick spacing in bytes: a friendly multiple of B, KiB, MiB or GiB, about 6 ticks. */
function tickStep(fileSize: number): number {
  const units = [1, 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4];
  const target = fileSize / 6;
  let best = 1;
  for (const unit of units) {
    for (const factor of [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256, 512]) {
      if (unit * factor <= target) best = unit * factor;
    }
  }
  return best;
}

/**
 * The file layout as an SVG picture a person can read without hovering: one bar from byte
 * 0 to the end of the file, each region labelled with its name and size where the label
 * fits, small regions (header, trailers) widened and labelled above the bar, a byte axis,
 * and a legend with each kind's total bytes and share. Titles on hover give exact ranges.
 */
export function renderLayoutSvg(report: CacheReport, title: string): string {
  const { segments, fileSize } = report;
  const widths = segmentWidths(segments);
  const xs: number[] = [];
  let cursor = LEFT;
  for (const width of widths) {
    xs.push(cursor);
    cursor += width;
  }
  const calloutRows: { x: number; end: number }[][] = [[], [], []];
  const callouts: { x: number; row: number; text: string }[] = [];
  const inside: string[] = [];
  // Few entries: a narrow one gets a callout too; many: the legend speaks for them.
  const calloutLive = report.entries.length <= 16;
  for (const [i, segment] of segments.entries()) {
    const x = xs[i] as number;
    const width = widths[i] as number;
    const size = formatBytes(segment.end - segment.start);
    const name =
      segment.kind === 'live' ? displayEntryName(segment.label) : KIND_NAMES[segment.kind];
    const room = Math.floor((width - 8) / CHAR_PX);
    const color = segment.kind === 'padding' || segment.kind === 'old-trailer' ? '#000' : '#fff';
    const center = (x + width / 2).toFixed(1);
    const line = (text: string, dy: number) =>
      `  <text x="${center}" y="${BAR_Y + BAR_HEIGHT / 2 + dy}" font-size="11" text-anchor="middle" fill="${color}">${escapeXml(text)}</text>`;
    if (room >= size.length && room >= 6 && segment.kind !== 'padding') {
      // Two lines: the name (shortened to fit), then the size.
      inside.push(line(truncate(name, room), -3), line(size, 11));
    } else if (room >= size.length) {
      inside.push(line(size, 4));
    } else if (segment.kind !== 'padding' && (segment.kind !== 'live' || calloutLive)) {
      // Too narrow for its label: name it above the bar, with a leader line.
      const label = `${truncate(name, 28)} ${size}`;
      const span = label.length * CHAR_PX;
      const middle = x + width / 2;
      const start = Math.min(Math.max(middle - span / 2, LEFT), LEFT + BAR_WIDTH - span);
      const row = calloutRows.findIndex((taken) =>
        taken.every((other) => start > other.end + 6 || start + span < other.x - 6),
      );
      if (row >= 0) {
        calloutRows[row]?.push({ x: start, end: start + span });
        callouts.push({ x: middle, row, text: label });
      }
    }
  }
  const calloutSvg = callouts.map(({ x, row, text }) => {
    const y = BAR_Y - 10 - row * 16;
    const span = text.length * CHAR_PX;
    const start = Math.min(Math.max(x - span / 2, LEFT), LEFT + BAR_WIDTH - span);
    return [
      `  <line x1="${x.toFixed(1)}" y1="${y + 3}" x2="${x.toFixed(1)}" y2="${BAR_Y}" stroke="#333" stroke-width="1"/>`,
      `  <text x="${start.toFixed(1)}" y="${y}" font-size="11" fill="#222">${escapeXml(text)}</text>`,
    ].join('\n');
  });
  const rects = segments.map((segment, i) => {
    const shown = displayEntryName(segment.label);
    const hoverName = shown.startsWith('hex:') ? shown : segment.label;
    const hover = `${hoverName}: bytes [${segment.start}, ${segment.end}) = ${formatBytes(segment.end - segment.start)}`;
    return `  <rect x="${(xs[i] as number).toFixed(2)}" y="${BAR_Y}" width="${(widths[i] as number).toFixed(2)}" height="${BAR_HEIGHT}" fill="${FILL[segment.kind]}"${(widths[i] as number) >= 6 ? ' stroke="#fff" stroke-width="0.5"' : ''}><title>${escapeXml(hover)}</title></rect>`;
  });
  const axisY = BAR_Y + BAR_HEIGHT;
  const ticks = axisTicks(fileSize).map((byte, index, all) => {
    const x = byteToX(segments, xs, widths, byte);
    const text = index === all.length - 1 ? `${formatBytes(byte)} (end)` : formatBytes(byte);
    const span = text.length * CHAR_PX;
    return {
      x,
      text,
      start: Math.min(Math.max(x - span / 2, 0), LEFT * 2 + BAR_WIDTH - span),
      span,
    };
  });
  // The end label always shows; another only when it does not crowd its neighbours.
  const end = ticks[ticks.length - 1];
  let lastEnd = Number.NEGATIVE_INFINITY;
  const tickSvg = ticks.flatMap((tick) => {
    const line = `  <line x1="${tick.x.toFixed(1)}" y1="${axisY}" x2="${tick.x.toFixed(1)}" y2="${axisY + 6}" stroke="#333"/>`;
    const crowds =
      tick !== end &&
      (tick.start < lastEnd + 10 || (end !== undefined && tick.start + tick.span > end.start - 10));
    if (crowds) return [line];
    lastEnd = tick.start + tick.span;
    return [
      line,
      `  <text x="${tick.start.toFixed(1)}" y="${axisY + 19}" font-size="11" fill="#333">${escapeXml(tick.text)}</text>`,
    ];
  });
  const kinds = ORDER.filter((kind) => segments.some((segment) => segment.kind === kind));
  const totals = (kind: SegmentKind) =>
    segments.filter((s) => s.kind === kind).reduce((sum, s) => sum + s.end - s.start, 0);
  const legendY = axisY + 44;
  const legend = kinds.map((kind, index) => {
    const column = index % 2;
    const row = Math.floor(index / 2);
    const x = LEFT + column * 480;
    const y = legendY + row * 20;
    const bytes = totals(kind);
    const count = segments.filter((s) => s.kind === kind).length;
    const share = ((100 * bytes) / Math.max(fileSize, 1)).toFixed(1);
    const what =
      kind === 'live'
        ? ` in ${report.entries.length} entr${report.entries.length === 1 ? 'y' : 'ies'}`
        : count > 1
          ? ` in ${count} ranges`
          : '';
    return `  <rect x="${x}" y="${y - 11}" width="14" height="14" fill="${FILL[kind]}"/><text x="${x + 20}" y="${y}" font-size="12" fill="#222">${escapeXml(`${KIND_NAMES[kind]}: ${formatBytes(bytes)} (${share}%)${what}`)}</text>`;
  });
  const widenedNote = segments.some(
    (segment, i) =>
      (widths[i] as number) >
      ((segment.end - segment.start) / Math.max(fileSize, 1)) * BAR_WIDTH + 0.5,
  )
    ? `  <text x="${LEFT}" y="${legendY + Math.ceil(kinds.length / 2) * 20 + 4}" font-size="11" fill="#555">Regions too small to see are drawn wider (the header and trailers at least ${MIN_WIDTH.header} px); the axis follows the drawing.</text>`
    : '';
  const height = legendY + Math.ceil(kinds.length / 2) * 20 + (widenedNote ? 22 : 6);
  const subtitle = `v${report.version}${report.generation === null ? '' : `, generation ${report.generation}`} · ${report.entries.length} entr${report.entries.length === 1 ? 'y' : 'ies'} · ${formatBytes(fileSize)} (${fileSize} bytes)`;
  const totalWidth = LEFT * 2 + BAR_WIDTH;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${totalWidth}" height="${height}" viewBox="0 0 ${totalWidth} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    `  <title>${escapeXml(`Layout of ${title}`)}</title>`,
    `  <rect x="0" y="0" width="${totalWidth}" height="${height}" fill="#fff"/>`,
    `  <text x="${LEFT}" y="22" font-size="15" font-weight="bold" fill="#111">${escapeXml(truncate(title, 90))}</text>`,
    `  <text x="${LEFT}" y="40" font-size="12" fill="#444">${escapeXml(subtitle)}</text>`,
    ...rects,
    ...inside,
    ...calloutSvg,
    `  <line x1="${LEFT}" y1="${axisY}" x2="${LEFT + BAR_WIDTH}" y2="${axisY}" stroke="#333"/>`,
    ...tickSvg,
    ...legend,
    widenedNote,
    '</svg>',
  ]
    .filter((line) => line !== '')
    .join('\n')
    .concat('\n');
}
