/** Exit codes of every command: 0 ok, 1 problems found / command failed, 2 bad usage or unreadable input. */
export const EXIT_OK = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_USAGE = 2;

/** An error the CLI reports as one line: what, where, and what to do. */
export class CliError extends Error {
  readonly exitCode: number;
  readonly hint: string | undefined;

  constructor(
    message: string,
    options: { exitCode?: number; hint?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? EXIT_PROBLEMS;
    this.hint = options.hint;
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, { exitCode: EXIT_USAGE, hint: 'run `memlayer --help` for usage' });
}
