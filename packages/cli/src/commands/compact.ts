import { copyFileSync, existsSync } from 'node:fs';
import { compact, WeightsCacheError } from '@memlayer/xnnpack-cache';
import { CliError, EXIT_OK, EXIT_USAGE } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';
import { formatBytes, renderTable } from '../format.js';
import { type ByteProgress, byteProgress } from '../progress.js';
import { requirePath } from './inspect.js';

export const compactCommand: Command = {
  name: 'compact',
  summary:
    'rewrite a cache file with live entries only (atomic replace); prints bytes before/after',
  usage: 'memlayer compact <cache> [--out <file>] [--json]',
  options: { out: { type: 'string' }, json: { type: 'boolean' } },
  run(context) {
    const source = requirePath(context.positionals);
    if (!existsSync(source)) {
      throw new CliError(`${source}: no such file`, {
        exitCode: EXIT_USAGE,
        hint: 'check the path',
      });
    }
    const out = stringFlag(context, 'out');
    // --out: compact a copy, leaving the original untouched.
    const target = out ?? source;
    if (out !== undefined) copyFileSync(source, out);
    let result: ReturnType<typeof compact>;
    let progress: ByteProgress | undefined;
    let copied = 0;
    try {
      result = compact(target, {
        onProgress: (done, total) => {
          progress ??= byteProgress('compact', total);
          progress.advance(done - copied);
          copied = done;
        },
      });
    } catch (error) {
      progress?.stop();
      if (!(error instanceof WeightsCacheError)) throw error;
      const cause = error.cause as { code?: string; message?: string } | undefined;
      const detail = cause?.code ? ` (${cause.code}: ${cause.message})` : '';
      throw new CliError(`${source}: ${error.code}: ${error.message}${detail}`, {
        exitCode: cause?.code?.startsWith('ERR_XPWC_') ? EXIT_USAGE : 1,
        hint: 'run `memlayer verify` on it; a damaged cache can simply be deleted and rebuilt',
        cause: error,
      });
    }
    progress?.stop();
    const summary = { path: target, ...result, savedBytes: result.bytesBefore - result.bytesAfter };
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(summary, null, 2)}\n`);
      return EXIT_OK;
    }
    context.stdout(
      `${renderTable(
        ['', 'bytes'],
        [
          ['before', formatBytes(result.bytesBefore)],
          ['after', formatBytes(result.bytesAfter)],
          ['saved', formatBytes(summary.savedBytes)],
        ],
      )}\n${result.entries} live entries kept (v${result.version})${result.droppedEntries > 0 ? `, ${result.droppedEntries} with a bad CRC dropped (they will be repacked)` : ''}; written to ${target}\n`,
    );
    return EXIT_OK;
  },
};
