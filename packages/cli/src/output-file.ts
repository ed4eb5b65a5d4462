import { existsSync, linkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, EXIT_USAGE } from './cli-error.js';
import type { CommandContext } from './command.js';

type OutputContext = Pick<CommandContext, 'cwd' | 'temp'>;

/**
 * Makes the file `target` by writing a hidden temp file beside it (`produce` fills it) and
 * renaming it into place, so `target` is either absent or complete: an interruption or a
 * failure leaves only the temp file, which the invocation removes. Without `force` an
 * existing `target` is refused (exit 2) and never touched, even one that appears while
 * the output is being produced.
 */
export function produceOutputFile(
  context: OutputContext,
  target: string,
  options: { force: boolean; flag?: string },
  produce: (tempPath: string) => void,
): string {
  const location = resolve(context.cwd, target);
  const refuse = () =>
    new CliError(`${target}: already exists`, {
      exitCode: EXIT_USAGE,
      hint: `pass --force to replace it, or choose another ${options.flag ?? 'path'}`,
    });
  if (!options.force && existsSync(location)) throw refuse();
  const temp = context.temp.track(
    join(
      dirname(location),
      `.${basename(location)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`,
    ),
  );
  try {
    produce(temp);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    // The temp file itself could not be made: a missing folder or no permission.
    if (failure.path === temp && failure.code !== undefined)
      throw new CliError(`${target}: cannot write (${failure.code})`, {
        exitCode: EXIT_USAGE,
        hint:
          failure.code === 'ENOENT'
            ? 'check that the folder exists'
            : 'check the folder permissions',
        cause: error,
      });
    throw error;
  }
  if (options.force) {
    renameSync(temp, location);
  } else {
    try {
      // link() fails with EEXIST instead of replacing: no window where a file is clobbered.
      linkSync(temp, location);
      unlinkSync(temp);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw refuse();
      // A filesystem without hard links: check, then rename.
      if (existsSync(location)) throw refuse();
      renameSync(temp, location);
    }
  }
  context.temp.commit(temp);
  return location;
}

/** produceOutputFile for data already in memory. */
export function writeOutputFile(
  context: OutputContext,
  target: string,
  data: string | Uint8Array,
  options: { force: boolean; flag?: string },
): string {
  return produceOutputFile(context, target, options, (temp) => writeFileSync(temp, data));
}
