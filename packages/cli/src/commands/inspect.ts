import { resolve } from 'node:path';
import type { CacheReport } from '../analyze.js';
import { openCacheFile } from '../cache-file.js';
import { CliError, EXIT_OK, usageError } from '../cli-error.js';
import { boolFlag, type Command, type CommandContext, stringFlag } from '../command.js';
import { formatBytes, hex32, renderTable, wrap } from '../format.js';
import { cacheFormatFailure } from '../format-error.js';
import { renderStrip, STRIP_LEGEND } from '../layout-strip.js';
import { writeOutputFile } from '../output-file.js';
import { style } from '../style.js';

/** Reads a cache file and lays it out; shared by inspect, stats and verify. */
export async function loadReport(path: string, cwd = process.cwd()): Promise<CacheReport> {
  // Loaded on use: `memlayer --version` and `--help` start without the format packages.
  const [{ analyzeCache }, { XpwcFormatError }] = await Promise.all([
    import('../analyze.js'),
    import('@memlayer/cache-format'),
  ]);
  const file = openCacheFile(path, resolve(cwd, path));
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

/** Which XNNPACK revision the entries fit, and how that was told. */
function revisionLine(report: CacheReport): string {
  const total = report.entries.length;
  if (total === 0) return 'no entries to tell the revision by';
  const byLayout = report.entries.every((entry) => entry.layout !== null);
  const counts = report.xnnpackRevisions.map(
    ({ revision, entries }) => `${revision} ${entries}/${total}`,
  );
  // Every entry explained by one revision under its one or two tilings (one build wrote the file).
  const fitting = report.xnnpackRevisions.filter(
    (summary) => summary.entries === total && (byLayout || summary.tilingEntries === total),
  );
  const how = byLayout ? 'by the recorded layouts' : 'by seed and packed size';
  const verdict =
    fitting.length === 1
      ? `${byLayout ? 'packed for' : 'seeds fit'} ${fitting[0]?.revision}${fitting[0]?.tiling ? ` (${fitting[0].tiling})` : ''}`
      : fitting.length > 1
        ? `seeds fit ${fitting.map((f) => `${f.revision}${f.tiling ? ` (${f.tiling})` : ''}`).join(' or ')}: add entries of other shapes to tell`
        : 'no known revision fits every entry';
  return `${verdict}; entries fitting: ${counts.join(', ')}, ${how}`;
}

/** What inspect mentions on stderr: tolerated v2 defects and commit slots that are not sound. */
export function reportWarnings(report: CacheReport): string[] {
  const warnings = report.tolerated.map(
    (issue) =>
      `${issue.code} at byte ${issue.offset}: ${issue.message} (read past, as ExecuTorch does)`,
  );
  for (const slot of report.commit?.slots ?? []) {
    if (slot.damaged)
      warnings.push(
        `commit slot ${slot.slot} is ${slot.status}${slot.code ? ` (${slot.code}: ${slot.message})` : ''}: damage, not an interrupted save; \`memlayer verify\` fails on it`,
      );
    else if (slot.status === 'torn-tail')
      warnings.push(
        `commit slot ${slot.slot} (generation ${slot.generation}) names a trailer past the end of the file: an interrupted save; the previous commit is in use`,
      );
  }
  return warnings;
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary:
    'a cache file: version, identity, entries, live vs orphan bytes and a layout strip; a .pte program: methods, delegates, nodes, constant keys, what cannot run',
  args: '<cache | model.pte>',
  options: {
    data: {
      type: 'string',
      value: '<model.ptd>',
      description: 'the .ptd file(s) of a .pte program, comma-separated',
    },
    json: { type: 'boolean', description: 'print the whole report as one JSON document' },
    svg: {
      type: 'string',
      value: '<file>',
      description: 'also write the file layout as an SVG picture (labelled, with a byte axis)',
    },
    width: {
      type: 'string',
      value: '<cells>',
      description: 'width of the layout strip in characters (default: 64, or less to fit)',
    },
  },
  async run(context) {
    const path = requirePath(context.positionals, 'a cache file or .pte program');
    if (path.toLowerCase().endsWith('.pte')) return inspectProgram(context, path);
    const report = await loadReport(path, context.cwd);
    const [{ describeLayout, displayName }, { renderLayoutSvg }] = await Promise.all([
      import('../entry-rows.js'),
      import('../layout-svg.js'),
    ]);
    const svg = stringFlag(context, 'svg');
    if (svg !== undefined)
      writeOutputFile(context, svg, renderLayoutSvg(report, path), { force: true });
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(report, null, 2)}\n`);
      return EXIT_OK;
    }
    const givenWidth = stringFlag(context, 'width');
    const width = Number(givenWidth ?? Math.max(8, Math.min(64, (context.columns ?? 66) - 2)));
    if (!Number.isInteger(width) || width < 8 || width > 1000)
      throw usageError(`Expected --width between 8 and 1000 but received "${givenWidth}"`);
    const color = context.color;
    const withLayout = report.entries.some((entry) => entry.layout !== null);
    for (const warning of reportWarnings(report)) {
      context.stderr(`${style('warning', 'yellow', context.stderrColor)} ${warning}\n`);
    }
    // "label     value", the value wrapped under itself when the terminal is narrow.
    const field = (label: string, value: string) =>
      wrap(`${label.padEnd(10)}${value}`, context.columns ?? Number.POSITIVE_INFINITY, 10).map(
        (line, index) =>
          index === 0 ? style(label, 'bold', color) + line.slice(label.length) : line,
      );
    const lines = [
      ...field('file', `${path} (${formatBytes(report.fileSize)}, ${report.fileSize} bytes)`),
      ...field(
        'version',
        `${report.version}${report.version === 2 ? ' (ExecuTorch-compatible)' : ''}${report.generation === null ? '' : `, generation ${report.generation}`}`,
      ),
      ...field('identity', report.identity ?? '(none: v2 carries no identity)'),
      ...field('page size', `${report.pageSize ?? '?'} (${report.pageSizeSource})`),
      ...field('xnnpack', revisionLine(report)),
      '',
      renderTable(
        [
          'name',
          'offset',
          'size',
          'seed',
          'fingerprint',
          'crc32c',
          ...(withLayout ? ['layout'] : []),
        ],
        report.entries.map((entry) => [
          displayName(entry),
          String(entry.offset),
          String(entry.size),
          hex32(entry.seed),
          entry.fingerprint === null ? '-' : hex32(entry.fingerprint),
          entry.crc32c === null ? '-' : hex32(entry.crc32c),
          ...(withLayout ? [describeLayout(entry.layout)] : []),
        ]),
        context.columns,
        { packed: true },
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
        context.columns,
      ),
      '',
      renderStrip(report.segments, report.fileSize, width, color),
      ...wrap(STRIP_LEGEND, context.columns ?? Number.POSITIVE_INFINITY),
    ];
    if (svg !== undefined) lines.push(`layout written to ${svg}`);
    context.stdout(`${lines.join('\n')}\n`);
    return EXIT_OK;
  },
};

/** inspect of an ExecuTorch program (nothing is loaded into a cache). */
async function inspectProgram(context: CommandContext, path: string): Promise<number> {
  const [{ describePteProgram, PteProgram, ModuleLoaderError }, { renderProgramSummary }] =
    await Promise.all([import('@memlayer/module-loader'), import('../program-inspect.js')]);
  const data = stringFlag(context, 'data');
  let program: InstanceType<typeof PteProgram> | undefined;
  try {
    program = new PteProgram(
      resolve(context.cwd, path),
      data === undefined ? [] : data.split(',').map((file) => resolve(context.cwd, file)),
    );
    const methods = describePteProgram(program);
    context.stdout(
      boolFlag(context, 'json')
        ? `${JSON.stringify({ program: path, methods }, null, 2)}\n`
        : renderProgramSummary(path, methods, context.columns),
    );
    return EXIT_OK;
  } catch (error) {
    if (error instanceof ModuleLoaderError) throw new CliError(`${error.code}: ${error.message}`);
    throw error;
  } finally {
    program?.close();
  }
}
