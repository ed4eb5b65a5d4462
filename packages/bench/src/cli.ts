import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { reportJson, reportMarkdown } from './report.js';
import { runBench } from './run.js';
import { ratiosSvg } from './svg.js';
import { SECTION_IDS, type SectionId } from './types.js';

export const EXIT_OK = 0;
/** A section failed (its reason is in the report). */
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export const USAGE = `Usage: pnpm bench [-- options]        (from the repository root)
       node packages/bench/dist/main.js [options]

Runs memlayer's benchmark sections side by side with the systems they replace and writes
report.md, report.json and ratios.svg.

Options:
  --quick          small models and few repeats (a smoke run)
  --out <dir>      folder for the report (default: a new temp folder, printed at the end)
  --json           print report.json on stdout instead of the markdown
  --only <ids>     run only these sections, comma-separated: ${SECTION_IDS.join(', ')}
  --help           this text
`;

/** Where the bench writes and what it may read; tests pass their own. */
export interface BenchIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Progress lines go to stderr only when it is a terminal. */
  readonly stderrIsTTY: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Called with the scratch folder while it exists (an interrupt handler may remove it). */
  trackScratch?(dir: string | null): void;
}

class UsageError extends Error {}

function parseOnly(value: string | undefined): SectionId[] {
  if (value === undefined) return [...SECTION_IDS];
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  for (const id of ids) {
    if (!(SECTION_IDS as readonly string[]).includes(id)) {
      throw new UsageError(
        `Expected --only to list sections among ${SECTION_IDS.join(', ')} but received "${id}"`,
      );
    }
  }
  if (ids.length === 0) throw new UsageError('Expected at least one section in --only');
  // Keep the suite's order, whatever order the flag gives.
  return SECTION_IDS.filter((id) => ids.includes(id));
}

function parse(argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean' },
        out: { type: 'string' },
        json: { type: 'boolean' },
        only: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
    return { ...values, ids: parseOnly(values.only) };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** One bench invocation: runs the sections, writes the report, returns the exit code. */
export async function benchMain(argv: string[], io: BenchIo): Promise<number> {
  // pnpm appends `-- --only mmap` (from `pnpm bench -- --only mmap`) after the script's own
  // options; the bench takes no positionals, so the separator is dropped wherever it is.
  const args = argv.filter((arg) => arg !== '--');
  let options: ReturnType<typeof parse>;
  try {
    options = parse(args);
  } catch (error) {
    io.stderr(`bench: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (options.help === true) {
    io.stdout(USAGE);
    return EXIT_OK;
  }
  const quick = options.quick === true;
  // Cache figures are about page-cache pages backed by a file: MEMLAYER_BENCH_DIR picks a
  // folder on a real disk when the temp folder is a tmpfs.
  const workDir = mkdtempSync(join(io.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'memlayer-bench-'));
  io.trackScratch?.(workDir);
  let report: Awaited<ReturnType<typeof runBench>>;
  try {
    report = await runBench(options.ids, {
      quick,
      workDir,
      progress: (message) => {
        if (io.stderrIsTTY) io.stderr(`… ${message}\n`);
      },
    });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
    io.trackScratch?.(null);
  }
  const markdown = reportMarkdown(report);
  const json = reportJson(report);
  // The report goes where the user said, or to a fresh temp folder: never into the
  // current folder unasked.
  const out =
    options.out === undefined
      ? mkdtempSync(join(tmpdir(), 'memlayer-bench-report-'))
      : resolve(io.cwd, options.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'report.md'), markdown);
  writeFileSync(join(out, 'report.json'), json);
  writeFileSync(join(out, 'ratios.svg'), ratiosSvg(report));
  if (options.json === true) {
    io.stdout(json);
    io.stderr(`bench: report written to ${out}\n`);
  } else {
    io.stdout(`${markdown}\nReport written to ${out}: report.md, report.json and ratios.svg.\n`);
  }
  return report.sections.some((section) => section.status === 'failed') ? EXIT_FAILED : EXIT_OK;
}
