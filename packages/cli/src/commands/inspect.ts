import { writeFileSync } from 'node:fs';
import { XpwcFormatError } from '@memlayer/cache-format';
import { analyzeCache, type CacheReport } from '../analyze.js';
import { openCacheFile } from '../cache-file.js';
import { EXIT_OK, usageError } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';
import { formatBytes, hex32, renderTable } from '../format.js';
import { cacheFormatFailure } from '../format-error.js';
import { renderStrip, STRIP_LEGEND } from '../layout-strip.js';
import { renderLayoutSvg } from '../layout-svg.js';
import { colorEnabled, style } from '../style.js';

/** Reads a cache file and lays it out; shared by inspect, stats and verify. */
export function loadReport(path: string): CacheReport {
  const file = openCacheFile(path);
  try {
    return analyzeCache(file);
  } catch (error) {
    if (error instanceof XpwcFormatError) throw cacheFormatFailure(path, error);
    throw error;
  } finally {
    file.close();
  }
}

export function requirePath(positionals: string[], what = 'a cache file'): string {
  const [path, extra] = positionals;
  if (path === undefined) throw usageError(`Expected ${what} path`);
  if (extra !== undefined) throw usageError(`Unexpected argument "${extra}"`);
  return path;
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'version, identity, entries, live vs orphan bytes and a layout strip of a cache file',
  usage: 'memlayer inspect <cache> [--json] [--svg <file>] [--width <cells>]',
  options: { json: { type: 'boolean' }, svg: { type: 'string' }, width: { type: 'string' } },
  run(context) {
    const path = requirePath(context.positionals);
    const report = loadReport(path);
    const svg = stringFlag(context, 'svg');
    if (svg !== undefined)
      writeFileSync(svg, renderLayoutSvg(report.segments, report.fileSize, path));
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(report, null, 2)}\n`);
      return EXIT_OK;
    }
    const width = Number(stringFlag(context, 'width') ?? 64);
    if (!Number.isInteger(width) || width < 8 || width > 1000)
      throw usageError('Expected --width between 8 and 1000');
    const color = colorEnabled();
    const lines = [
      `${style('file', 'bold', color)}      ${path} (${formatBytes(report.fileSize)}, ${report.fileSize} bytes)`,
      `${style('version', 'bold', color)}   ${report.version}${report.version === 2 ? ' (ExecuTorch-compatible)' : ''}${report.generation === null ? '' : `, generation ${report.generation}`}`,
      `${style('identity', 'bold', color)}  ${report.identity ?? '(none: v2 carries no identity)'}`,
      `${style('page size', 'bold', color)} ${report.pageSize ?? '?'} (${report.pageSizeSource})`,
      '',
      renderTable(
        ['name', 'offset', 'size', 'seed', 'fingerprint', 'crc32c'],
        report.entries.map((entry) => [
          entry.name,
          String(entry.offset),
          String(entry.size),
          hex32(entry.seed),
          entry.fingerprint === null ? '-' : hex32(entry.fingerprint),
          entry.crc32c === null ? '-' : hex32(entry.crc32c),
        ]),
      ),
      '',
      renderTable(
        ['region', 'bytes', 'share'],
        (
          [
            ['live data', report.liveBytes],
            ['page padding', report.paddingBytes],
            ['header', report.headerBytes],
            ['live trailer', report.trailerBytes],
            ['older trailers', report.oldTrailerBytes],
            ['orphans', report.orphanBytes],
            ['uncommitted tail', report.deadTailBytes],
          ] as const
        ).map(([label, bytes]) => [
          label,
          formatBytes(bytes),
          `${((100 * bytes) / Math.max(report.fileSize, 1)).toFixed(1)}%`,
        ]),
      ),
      '',
      renderStrip(report.segments, report.fileSize, width, color),
      STRIP_LEGEND,
    ];
    if (svg !== undefined) lines.push(`layout written to ${svg}`);
    context.stdout(`${lines.join('\n')}\n`);
    return EXIT_OK;
  },
};
