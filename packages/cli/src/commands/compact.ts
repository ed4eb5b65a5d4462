import { copyFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { compact } from '@memlayer/xnnpack-cache';
import { CliError, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE } from '../cli-error.js';
import { boolFlag, type Command, type CommandContext, stringFlag } from '../command.js';
import { formatBytes, renderTable } from '../format.js';
import { produceOutputFile } from '../output-file.js';
import type { ByteProgress } from '../progress.js';
import { requirePath } from './inspect.js';

export const compactCommand: Command = {
  name: 'compact',
  summary:
    'rewrite a cache file with live entries only (atomic replace); prints bytes before/after',
  args: '<cache>',
  options: {
    out: {
      type: 'string',
      value: '<file>',
      description: 'compact into this new file instead, leaving the original untouched',
    },
    force: {
      type: 'boolean',
      description:
        'compact a damaged file anyway, keeping the entries it can read; let --out replace an existing file',
    },
    json: { type: 'boolean', description: 'print the summary as one JSON document' },
  },
  async run(context) {
    const cache = await import('@memlayer/xnnpack-cache');
    const source = requirePath(context.positionals);
    const sourceLocation = resolve(context.cwd, source);
    if (!existsSync(sourceLocation)) {
      throw new CliError(`${source}: no such file`, {
        exitCode: EXIT_USAGE,
        hint: 'check the path',
      });
    }
    const out = stringFlag(context, 'out');
    const force = boolFlag(context, 'force');
    const { entryLossAt, lostCount } = await import('../entry-loss.js');
    const loss = entryLossAt(source, sourceLocation);
    if (loss && !force) {
      // Compacting rewrites the index from what it can read: the rest would be gone for good.
      const lost = lostCount(loss);
      throw new CliError(
        `${source}: not compacted: ${loss.message}; compacting would keep ${loss.readable} and drop ${lost === null ? 'the rest (the file does not say how many)' : lost}; nothing was written`,
        {
          exitCode: EXIT_PROBLEMS,
          hint: 'pass --force to keep the readable entries and drop the rest',
        },
      );
    }
    let result: ReturnType<typeof compact> | undefined;
    if (out === undefined) {
      result = compactFile(cache, context, source, sourceLocation);
    } else {
      // --out: compact a copy under a temp name, then rename it into place.
      produceOutputFile(context, out, { force, flag: '--out' }, (temp) => {
        copyFileSync(sourceLocation, temp);
        result = compactFile(cache, context, source, temp);
      });
    }
    if (result === undefined) throw new Error('compact produced no result');
    const target = out ?? source;
    const summary = {
      path: target,
      ...result,
      savedBytes: result.bytesBefore - result.bytesAfter,
      unreadableEntriesDropped: loss && (lostCount(loss) ?? 'unknown'),
    };
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
      )}\n${result.entries} live entries kept (v${result.version})${result.droppedEntries > 0 ? `, ${result.droppedEntries} with a bad CRC dropped (they will be repacked)` : ''}${loss ? `, ${unreadableDropped(lostCount(loss))}` : ''}; written to ${target}\n`,
    );
    return EXIT_OK;
  },
};

function unreadableDropped(lost: number | null): string {
  if (lost === null) return 'the unreadable entries dropped (the file does not say how many)';
  return `${lost} unreadable ${lost === 1 ? 'entry' : 'entries'} dropped`;
}

/** compact() with a progress bar; its failures become one-line CLI errors naming `source`. */
function compactFile(
  { compact, WeightsCacheError }: typeof import('@memlayer/xnnpack-cache'),
  context: CommandContext,
  source: string,
  location: string,
): ReturnType<typeof compact> {
  let progress: ByteProgress | undefined;
  let copied = 0;
  try {
    return compact(location, {
      onProgress: (done, total) => {
        progress ??= context.progress('compact', total);
        progress.advance(done - copied);
        copied = done;
      },
    });
  } catch (error) {
    if (!(error instanceof WeightsCacheError)) throw error;
    const cause = error.cause as { code?: string; message?: string } | undefined;
    const detail = cause?.code ? ` (${cause.code}: ${cause.message})` : '';
    throw new CliError(`${source}: ${error.code}: ${error.message}${detail}`, {
      exitCode: cause?.code?.startsWith('ERR_XPWC_') ? EXIT_USAGE : 1,
      hint: 'run `memlayer verify` on it; a damaged cache can simply be deleted and rebuilt',
      cause: error,
    });
  } finally {
    progress?.stop();
  }
}
