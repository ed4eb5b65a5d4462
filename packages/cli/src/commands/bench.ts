import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { runBench } from '../bench/run.js';
import { SECTION_IDS, type SectionId } from '../bench/types.js';
import { EXIT_OK, EXIT_PROBLEMS, usageError } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';

function parseOnly(value: string | undefined): SectionId[] {
  if (value === undefined) return [...SECTION_IDS];
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  for (const id of ids) {
    if (!(SECTION_IDS as readonly string[]).includes(id)) {
      throw usageError(
        `Expected --only to list sections among ${SECTION_IDS.join(', ')} but received "${id}"`,
      );
    }
  }
  if (ids.length === 0) throw usageError('Expected at least one section in --only');
  // Keep the suite's order, whatever order the flag gives.
  return SECTION_IDS.filter((id) => ids.includes(id));
}

export const benchCommand: Command = {
  name: 'bench',
  summary:
    'benchmark suite: memlayer side by side with the systems it replaces (report.md, report.json, ratios.svg)',
  args: '',
  options: {
    quick: { type: 'boolean', description: 'small models and few repeats (a smoke run)' },
    out: {
      type: 'string',
      value: '<dir>',
      description: 'folder for report.md, report.json and ratios.svg (default: a new temp folder)',
    },
    json: { type: 'boolean', description: 'print report.json on stdout instead of the markdown' },
    only: {
      type: 'string',
      value: `<${SECTION_IDS.join(',')}>`,
      description: 'run only these sections (comma-separated)',
    },
  },
  async run(context) {
    if (context.positionals.length > 0)
      throw usageError(`Unexpected argument "${context.positionals[0]}"`);
    const ids = parseOnly(stringFlag(context, 'only'));
    const [{ runBench }, { reportJson, reportMarkdown }, { ratiosSvg }] = await Promise.all([
      import('../bench/run.js'),
      import('../bench/report.js'),
      import('../bench/svg.js'),
    ]);
    const named = stringFlag(context, 'out');
    const quick = boolFlag(context, 'quick');
    const tty = context.stderrStream.isTTY === true;
    // Cache figures are about page-cache pages backed by a file: MEMLAYER_BENCH_DIR picks a
    // folder on a real disk when the temp folder is a tmpfs.
    const workDir = context.temp.track(
      mkdtempSync(join(context.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'memlayer-bench-')),
    );
    let report: Awaited<ReturnType<typeof runBench>>;
    try {
      report = await runBench(ids, {
        quick,
        workDir,
        progress: (message) => {
          if (tty) context.stderr(`… ${message}\n`);
        },
      });
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
    const markdown = reportMarkdown(report);
    const json = reportJson(report);
    // The report goes where the user said, or to a fresh temp folder: never into the
    // current folder unasked.
    const out =
      named === undefined
        ? mkdtempSync(join(tmpdir(), 'memlayer-bench-report-'))
        : resolve(context.cwd, named);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'report.md'), markdown);
    writeFileSync(join(out, 'report.json'), json);
    writeFileSync(join(out, 'ratios.svg'), ratiosSvg(report));
    if (boolFlag(context, 'json')) {
      context.stdout(json);
      context.stderr(`bench: report written to ${out}\n`);
    } else
      context.stdout(
        `${markdown}\nReport written to ${out}: report.md, report.json and ratios.svg.\n`,
      );
    return report.sections.some((section) => section.status === 'failed') ? EXIT_PROBLEMS : EXIT_OK;
  },
};
