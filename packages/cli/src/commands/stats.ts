import { EXIT_OK } from '../cli-error.js';
import { boolFlag, type Command } from '../command.js';
import { formatBytes, renderTable } from '../format.js';
import { loadReport, requirePath } from './inspect.js';

export const statsCommand: Command = {
  name: 'stats',
  summary: 'entry counts and byte totals of a cache file',
  args: '<cache>',
  options: { json: { type: 'boolean', description: 'print the figures as one JSON document' } },
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
    context.stdout(`${renderTable(['stat', 'value'], rows, context.columns)}\n`);
    return EXIT_OK;
  },
};
