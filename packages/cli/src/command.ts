import type { OutputStream } from './io.js';
import type { ByteProgress } from './progress.js';
import type { TempPaths } from './temp-paths.js';

/** One option of a command: what parseArgs needs, plus the line `--help` prints for it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder shown after a string option in help, e.g. "<file>". */
  value?: string;
  description: string;
}

/** What a command gets: parsed flags, positionals, where to write, and its surroundings. */
export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Width that tables must fit; undefined = no limit. */
  columns: number | undefined;
  cwd: string;
  /** ANSI colour on stdout / stderr, per NO_COLOR, FORCE_COLOR, TERM and the TTY. */
  color: boolean;
  stderrColor: boolean;
  /** A progress bar on stderr (silent unless stderr is a terminal that wants one). */
  progress(label: string, totalBytes: number): ByteProgress;
  /** Paths to remove if the command fails or is interrupted before committing them. */
  temp: TempPaths;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** The stderr stream itself, for tools that draw on it. */
  stderrStream: OutputStream;
}

export interface Command {
  name: string;
  summary: string;
  /** Positional arguments, e.g. "<cache>". */
  args: string;
  options: Record<string, OptionSpec>;
  run(context: CommandContext): Promise<number> | number;
}

export function stringFlag(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function boolFlag(context: CommandContext, name: string): boolean {
  return context.values[name] === true;
}

/** One line of usage: `memlayer inspect <cache> [--json] [--svg <file>]`. */
export function usageLine(command: Command): string {
  const options = Object.entries(command.options).map(([name, option]) =>
    option.type === 'string' ? `[--${name} ${option.value ?? '<value>'}]` : `[--${name}]`,
  );
  return ['memlayer', command.name, command.args, ...options].filter((part) => part).join(' ');
}
