import { EXIT_OK, usageError } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';
import { formatBytes, renderTable } from '../format.js';
import { loadReport, requirePath } from './inspect.js';

export const statsCommand: Command = {
  name: 'stats',
  summary: 'entry counts and byte totals of a cache file',
  args: '<cache>',
  options: {
    'max-mib': {
      type: 'string',
      value: '<n>',
      description:
        'the disk budget the file is kept to (packed_cache_max_mib): show the file against it',
    },
    json: { type: 'boolean', description: 'print the figures as one JSON document' },
  },
  async run(context) {
    const path = requirePath(context.positionals);
    const report = await loadReport(path, context.cwd);
    const names = new Set(report.entries.map((entry) => entry.name));
    const stats = {
      path,
      version: report.version,
      fileBytes: report.fileSize,
      entries: report.entries.length,
      distinctNames: names.size,
      liveBytes: report.liveBytes,
      paddingBytes: report.paddingBytes,
      trailerBytes: report.trailerBytes + report.headerBytes,
      orphanBytes: report.orphanBytes + report.oldTrailerBytes + report.deadTailBytes,
      committedGenerations: report.generation === null ? null : report.history.length + 1,
      liveShare: report.fileSize === 0 ? 0 : report.liveBytes / report.fileSize,
      ...budgetOf(report.fileSize, stringFlag(context, 'max-mib')),
    };
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(stats, null, 2)}\n`);
      return EXIT_OK;
    }
    const rows: string[][] = [
      ['version', String(stats.version)],
      ['entries', String(stats.entries)],
      ['distinct names', String(stats.distinctNames)],
      ['file', formatBytes(stats.fileBytes)],
      ['live data', formatBytes(stats.liveBytes)],
      ['page padding', formatBytes(stats.paddingBytes)],
      ['header + trailer', formatBytes(stats.trailerBytes)],
      ['orphans (compactable)', formatBytes(stats.orphanBytes)],
      ['live share', `${(stats.liveShare * 100).toFixed(1)}%`],
    ];
    if (stats.committedGenerations !== null)
      rows.push(['committed generations', String(stats.committedGenerations)]);
    if (stats.maxFileBytes !== undefined) {
      const share = ((stats.budgetShare ?? 0) * 100).toFixed(1);
      rows.push([
        'used / budget',
        `${formatBytes(stats.fileBytes)} / ${formatBytes(stats.maxFileBytes)} (${share}%)`,
      ]);
    }
    context.stdout(`${renderTable(['stat', 'value'], rows, context.columns)}\n`);
    return EXIT_OK;
  },
};

/**
 * The file against a budget of `mib` MiB (--max-mib). A file over it is compacted with
 * least-recently-used eviction when a runtime holding that budget closes it; which entries
 * go then depends on that runtime's use, so only the runtime reports them (`memlayer run`).
 */
function budgetOf(
  fileBytes: number,
  mib: string | undefined,
): { maxFileBytes?: number; budgetShare?: number } {
  if (mib === undefined) return {};
  const value = Number(mib);
  if (!/^\d+$/.test(mib) || value < 1 || value > 2 ** 31 - 1)
    throw usageError(`Expected a positive whole number of MiB for --max-mib but received "${mib}"`);
  const maxFileBytes = value * 1024 * 1024;
  return { maxFileBytes, budgetShare: fileBytes / maxFileBytes };
}
