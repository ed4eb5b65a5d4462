import { resolve } from 'node:path';
import type { CacheReport } from '../analyze.js';
import { openCacheFile } from '../cache-file.js';
import { EXIT_OK, EXIT_PROBLEMS } from '../cli-error.js';
import { boolFlag, type Command, type CommandContext, stringFlag } from '../command.js';
import { formatBytes, hex32 } from '../format.js';
import { cacheFormatFailure } from '../format-error.js';
import { style } from '../style.js';
import { loadReport, requirePath } from './inspect.js';

export interface Finding {
  severity: 'problem' | 'warning';
  code: string;
  message: string;
}

/** Reads entry data in chunks of this size: bounded memory whatever the entry size. */
const CRC_CHUNK_BYTES = 8 * 1024 * 1024;

export const verifyCommand: Command = {
  name: 'verify',
  summary:
    'check bounds and the trailer CRC; with --full every entry CRC (exit 1 when problems are found)',
  args: '[<cache>]',
  options: {
    full: {
      type: 'boolean',
      description: 'also read every entry and check its data CRC32C (v3 files)',
    },
    program: {
      type: 'string',
      value: '<model.pte>',
      description: 'also re-hash every named constant of an ExecuTorch program against its key',
    },
    data: {
      type: 'string',
      value: '<model.ptd>',
      description: 'the .ptd file(s) of --program, comma-separated',
    },
    json: { type: 'boolean', description: 'print the findings as one JSON document' },
  },
  async run(context) {
    const { XpwcFormatError } = await import('@memlayer/cache-format');
    const programArg = stringFlag(context, 'program');
    if (programArg !== undefined && context.positionals.length === 0) {
      return verifyProgramOnly(context, programArg);
    }
    const path = requirePath(context.positionals);
    const full = boolFlag(context, 'full');
    const findings: Finding[] = [];
    let report: CacheReport | null = null;
    try {
      report = await loadReport(path, context.cwd);
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      const failure = error as { exitCode?: number };
      // An unreadable or foreign file is bad input (exit 2); a damaged cache is a finding.
      if (!(cause instanceof XpwcFormatError) || failure.exitCode !== EXIT_PROBLEMS) throw error;
      findings.push({
        severity: 'problem',
        code: cause.code,
        message: `${cause.message} (byte ${cause.offset})`,
      });
    }
    const { entryLossAt } = await import('../entry-loss.js');
    const loss = entryLossAt(path, resolve(context.cwd, path));
    if (loss) findings.push({ severity: 'problem', code: 'ENTRIES_LOST', message: loss.message });
    let checkedBytes = 0;
    if (report) {
      for (const warning of report.warnings) {
        // A v2 defect that lost entries is the ENTRIES_LOST problem above, not a warning.
        const lostThere =
          loss !== null &&
          warning.code === 'WARN_XPWC_TOLERATED' &&
          warning.issue?.code !== 'ERR_XPWC_BAD_INDEX_START';
        if (lostThere) continue;
        const severity = warning.code === 'WARN_XPWC_OVERLAPPING_DATA' ? 'problem' : 'warning';
        findings.push({ severity, code: warning.code, message: warning.message });
      }
      findings.push(...slotFindings(report));
      if (report.historyError)
        findings.push({
          severity: 'warning',
          code: 'HISTORY',
          message: `older trailer chain is broken: ${report.historyError}`,
        });
      const damaged = loss !== null || report.commit?.slots.some((slot) => slot.damaged) === true;
      if (report.deadTailBytes > 0) {
        findings.push({
          severity: 'warning',
          code: 'DEAD_TAIL',
          message: damaged
            ? `${report.deadTailBytes} bytes after the trailer in use are reachable from no sound commit slot (see above)`
            : `${report.deadTailBytes} bytes after the committed trailer were never committed (an interrupted save)`,
        });
      }
      if (full && report.version === 2) {
        findings.push({
          severity: 'warning',
          code: 'NO_CHECKSUMS',
          message: 'v2 files carry no data checksums: --full can only check bounds',
        });
      }
      if (full && report.version === 3)
        checkedBytes = await checkEntryCrcs(context, path, report.entries, findings);
    }
    if (programArg !== undefined) {
      const { verifyProgram } = await import('../program-verify.js');
      const data = stringFlag(context, 'data');
      const checked = await verifyProgram(
        resolve(context.cwd, programArg),
        data === undefined ? [] : data.split(',').map((file) => resolve(context.cwd, file)),
      );
      findings.push(...checked.findings);
    }
    const problems = findings.filter((finding) => finding.severity === 'problem');
    const result = {
      path,
      ok: problems.length === 0,
      mode: full ? 'full' : 'index',
      entries: report?.entries.length ?? 0,
      lostEntries: loss && { readable: loss.readable, claimed: loss.claimed },
      checkedDataBytes: checkedBytes,
      findings,
    };
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      const color = context.color;
      const lines = findings.map(
        (finding) =>
          `${finding.severity === 'problem' ? style('problem', 'red', color) : style('warning', 'yellow', color)} ${finding.code}: ${finding.message}`,
      );
      const summary = result.ok
        ? style(`${path}: ok`, 'green', color)
        : style(
            `${path}: ${problems.length} problem${problems.length === 1 ? '' : 's'} found`,
            'red',
            color,
          );
      const detail = report
        ? ` (${result.entries} ${result.entries === 1 ? 'entry' : 'entries'}, ${full ? `${formatBytes(checkedBytes)} of data checked` : 'index checked; --full also checks data CRCs'})`
        : '';
      context.stdout(`${[...lines, summary + detail].join('\n')}\n`);
    }
    return result.ok ? EXIT_OK : EXIT_PROBLEMS;
  },
};

/**
 * A corrupt slot is damage (each slot sits alone in a 512-byte sector, written atomically):
 * a problem. A slot naming a trailer that is cut off or fails its checks is ENTRIES_LOST.
 */
function slotFindings(report: CacheReport): Finding[] {
  return (report.commit?.slots ?? [])
    .filter((slot) => slot.status === 'corrupt')
    .map(
      (slot): Finding => ({
        severity: 'problem',
        code: 'COMMIT_SLOT_CORRUPT',
        message: `commit slot ${slot.slot} is corrupt${slot.code ? ` (${slot.code}: ${slot.message})` : ''}; readers use the other slot's older commit`,
      }),
    );
}

async function checkEntryCrcs(
  context: CommandContext,
  path: string,
  entries: { name: string; offset: number; size: number; crc32c: number | null }[],
  findings: Finding[],
): Promise<number> {
  const [{ XpwcFormatError }, { dataCrc32c }] = await Promise.all([
    import('@memlayer/cache-format'),
    import('../data-crc.js'),
  ]);
  const file = openCacheFile(path, resolve(context.cwd, path));
  const total = entries.reduce((sum, entry) => sum + entry.size, 0);
  const progress = context.progress('verify', total);
  try {
    for (const entry of entries) {
      let crc = 0;
      for (let done = 0; done < entry.size; done += CRC_CHUNK_BYTES) {
        const length = Math.min(CRC_CHUNK_BYTES, entry.size - done);
        crc = dataCrc32c(file.read(entry.offset + done, length), crc);
        progress.advance(length);
      }
      if (entry.crc32c !== null && crc !== entry.crc32c) {
        findings.push({
          severity: 'problem',
          code: 'ERR_XPWC_CHECKSUM',
          message: `entry "${entry.name}" at byte ${entry.offset}: data CRC32C ${hex32(crc)} but the index says ${hex32(entry.crc32c)}`,
        });
      }
    }
    return total;
  } catch (error) {
    if (error instanceof XpwcFormatError) throw cacheFormatFailure(path, error);
    throw error;
  } finally {
    progress.stop();
    file.close();
  }
}

/** verify --program without a cache file: the program's constants alone. */
async function verifyProgramOnly(context: CommandContext, programArg: string): Promise<number> {
  const { verifyProgram } = await import('../program-verify.js');
  const data = stringFlag(context, 'data');
  const checked = await verifyProgram(
    resolve(context.cwd, programArg),
    data === undefined ? [] : data.split(',').map((file) => resolve(context.cwd, file)),
  );
  const ok = checked.findings.length === 0;
  if (boolFlag(context, 'json')) {
    context.stdout(`${JSON.stringify({ program: programArg, ok, ...checked }, null, 2)}\n`);
  } else {
    const color = context.color;
    const lines = checked.findings.map(
      (finding) => `${style('problem', 'red', color)} ${finding.code}: ${finding.message}`,
    );
    lines.push(
      ok
        ? style(
            `${programArg}: ok (${checked.constants} constants re-hashed, ${formatBytes(checked.bytesHashed)})`,
            'green',
            color,
          )
        : style(
            `${programArg}: ${checked.findings.length} of ${checked.constants} constants do not match their keys`,
            'red',
            color,
          ),
    );
    context.stdout(`${lines.join('\n')}\n`);
  }
  return ok ? EXIT_OK : EXIT_PROBLEMS;
}
