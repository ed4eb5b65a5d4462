import type { XpwcFormatError } from '@memlayer/cache-format';
import { CliError, EXIT_PROBLEMS, EXIT_USAGE } from './cli-error.js';

/** Codes meaning "this is not a cache file we can read at all" rather than "a damaged one". */
const UNUSABLE_CODES = new Set(['ERR_XPWC_BAD_MAGIC', 'ERR_XPWC_UNSUPPORTED_VERSION']);

/** Turns a decode failure into the CLI's one-line error: what, where, what to do. */
export function cacheFormatFailure(path: string, error: XpwcFormatError): CliError {
  const where = error.offset >= 0 ? ` at byte ${error.offset}` : '';
  const unusable = UNUSABLE_CODES.has(error.code);
  const hint =
    error.code === 'ERR_XPWC_STALE_V1'
      ? 'a v1 cache carries no seeds: delete it and let the runtime rebuild it'
      : unusable
        ? 'is this an XPWC cache file?'
        : 'the cache is damaged: delete it (or run `memlayer compact`) and let the runtime rebuild it';
  return new CliError(`${path}: ${error.code}${where}: ${error.message}`, {
    exitCode: unusable ? EXIT_USAGE : EXIT_PROBLEMS,
    hint,
    cause: error,
  });
}
