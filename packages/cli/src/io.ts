/**
 * Where one CLI invocation reads its surroundings and writes its output. `main()` takes
 * these instead of touching `process`, so tests run commands in-process with captured
 * streams, a chosen environment and a chosen terminal width.
 */

/** The part of a writable stream the CLI uses; process.stdout and process.stderr fit. */
export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Readonly<Record<string, string | undefined>>;
  /** Width tables must fit; undefined = no limit (output is not a terminal). */
  columns: number | undefined;
  /** Relative paths given on the command line resolve against this folder. */
  cwd: string;
  /** Aborted when the invocation is interrupted (SIGINT/SIGTERM): long work stops early. */
  signal: AbortSignal;
}

/** What callers may pass: any part of CliIo; a function is accepted for a stream. */
export type CliIoInput = Partial<
  Omit<CliIo, 'stdout' | 'stderr'> & {
    stdout: OutputStream | ((text: string) => unknown);
    stderr: OutputStream | ((text: string) => unknown);
  }
>;

function toStream(value: OutputStream | ((text: string) => unknown)): OutputStream {
  return typeof value === 'function' ? { write: value } : value;
}

/** Fills what the caller left out from the real process. */
export function resolveIo(input: CliIoInput = {}): CliIo {
  const stdout = toStream(input.stdout ?? process.stdout);
  const env = input.env ?? process.env;
  return {
    stdout,
    stderr: toStream(input.stderr ?? process.stderr),
    env,
    columns: 'columns' in input ? input.columns : terminalColumns(stdout, env),
    cwd: input.cwd ?? process.cwd(),
    signal: input.signal ?? new AbortController().signal,
  };
}

/** The terminal's width, or $COLUMNS when set; undefined when output is not a terminal. */
function terminalColumns(
  stream: OutputStream,
  env: Readonly<Record<string, string | undefined>>,
): number | undefined {
  const fromEnv = Number(env['COLUMNS']);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return stream.isTTY === true && (stream.columns ?? 0) > 0 ? stream.columns : undefined;
}

/**
 * Colour on a stream, by the conventions Node's own tty module follows: FORCE_COLOR wins
 * (0 or false turn it off), then NO_COLOR (no-color.org: any non-empty value) and TERM=dumb
 * turn it off, otherwise colour only on a terminal.
 */
export function colorEnabled(
  stream: OutputStream,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const force = forcedColor(env);
  if (force !== undefined) return force;
  if ((env['NO_COLOR'] ?? '') !== '') return false;
  if (env['TERM'] === 'dumb') return false;
  return stream.isTTY === true;
}

function forcedColor(env: Readonly<Record<string, string | undefined>>): boolean | undefined {
  const value = env['FORCE_COLOR'];
  if (value === undefined) return undefined;
  return value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * A progress bar redraws the line with cursor escape codes: only on a terminal that
 * understands them (not TERM=dumb), and not under CI (its log keeps every redraw) unless
 * FORCE_COLOR asks for it.
 */
export function progressEnabled(
  stream: OutputStream,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (stream.isTTY !== true || env['TERM'] === 'dumb') return false;
  if ((env['CI'] ?? '') !== '' && env['CI'] !== 'false') return forcedColor(env) === true;
  return true;
}
