import { parseArgs } from 'node:util';
import { CliError, EXIT_OK, EXIT_USAGE } from './cli-error.js';
import type { Command, CommandContext } from './command.js';
import { commands } from './commands/index.js';
import { closest, commandHelp, globalHelp } from './help.js';
import { type CliIo, type CliIoInput, colorEnabled, progressEnabled, resolveIo } from './io.js';
import { byteProgress } from './progress.js';
import { style } from './style.js';
import { TempPaths } from './temp-paths.js';
import { cliVersion } from './version.js';

/**
 * Runs one CLI invocation and returns its exit code; never throws. `io` defaults to the
 * real process (stdout, stderr, env, terminal width, cwd); tests pass their own.
 */
export async function main(argv: string[], ioInput: CliIoInput = {}): Promise<number> {
  const io = resolveIo(ioInput);
  const stdout = (text: string) => void io.stdout.write(text);
  const stderr = (text: string) => void io.stderr.write(text);
  const debug = argv.includes('--debug');
  const args = argv.filter((arg) => arg !== '--debug');
  const [name, ...rest] = args;
  if (name === undefined) {
    // No command is bad usage: the help goes where errors go.
    stderr(`${globalHelp(commands, io.columns)}\n`);
    return EXIT_USAGE;
  }
  if (name === '--help' || name === '-h') {
    stdout(`${globalHelp(commands, io.columns)}\n`);
    return EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    stdout(`${cliVersion()}\n`);
    return EXIT_OK;
  }
  if (name === 'help') {
    const topic = rest[0];
    if (topic === undefined) {
      stdout(`${globalHelp(commands, io.columns)}\n`);
      return EXIT_OK;
    }
    const command = findCommand(topic, io);
    if (command) stdout(`${commandHelp(command, io.columns)}\n`);
    return command ? EXIT_OK : EXIT_USAGE;
  }
  const command = findCommand(name, io);
  if (!command) return EXIT_USAGE;
  if (rest.includes('--help') || rest.includes('-h')) {
    stdout(`${commandHelp(command, io.columns)}\n`);
    return EXIT_OK;
  }
  const temp = new TempPaths();
  try {
    return await command.run({ ...parse(command, rest), ...contextOf(io, temp) });
  } catch (error) {
    const color = colorEnabled(io.stderr, io.env);
    stderr(
      `${io.signal.aborted ? describeInterruption(command, io.signal.reason, color) : describeFailure(command, error, debug, color)}\n`,
    );
    return error instanceof CliError ? error.exitCode : 1;
  } finally {
    temp.dispose();
  }
}

function contextOf(io: CliIo, temp: TempPaths): Omit<CommandContext, 'values' | 'positionals'> {
  const progress = progressEnabled(io.stderr, io.env);
  return {
    stdout: (text) => void io.stdout.write(text),
    stderr: (text) => void io.stderr.write(text),
    env: io.env,
    columns: io.columns,
    cwd: io.cwd,
    color: colorEnabled(io.stdout, io.env),
    stderrColor: colorEnabled(io.stderr, io.env),
    progress: (label, total) => byteProgress(label, total, io.stderr, progress),
    temp,
    signal: io.signal,
    stderrStream: io.stderr,
  };
}

/** The command called `name`, or a one-line error with the closest name on stderr. */
function findCommand(name: string, io: CliIo): Command | undefined {
  const command = commands.find((candidate) => candidate.name === name);
  if (command) return command;
  const guess = closest(
    name,
    commands.map((candidate) => candidate.name),
  );
  const hint = guess
    ? `did you mean \`memlayer ${guess}\`?`
    : 'run `memlayer --help` for the list of commands';
  io.stderr.write(`memlayer: unknown command "${name}"; ${hint}\n`);
  return undefined;
}

function parse(command: Command, args: string[]) {
  const options = Object.fromEntries(
    Object.entries(command.options).map(([name, option]) => [
      name,
      option.short ? { type: option.type, short: option.short } : { type: option.type },
    ]),
  );
  try {
    const { values, positionals } = parseArgs({
      args,
      options,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    const unknown = /Unknown option '-+([^']+)'/.exec((error as Error).message)?.[1];
    const guess = unknown ? closest(unknown, Object.keys(command.options)) : undefined;
    const message = unknown
      ? `unknown option "--${unknown}"${guess ? `; did you mean --${guess}?` : ''}`
      : (error as Error).message;
    throw new CliError(`memlayer ${command.name}: ${message}`, {
      exitCode: EXIT_USAGE,
      hint: `run \`memlayer help ${command.name}\` for its options`,
    });
  }
}

/** One line for a command stopped by Ctrl-C or SIGTERM: what happened, not a stack to ask for. */
function describeInterruption(command: Command, reason: unknown, color: boolean): string {
  const why = reason instanceof Error ? reason.message : 'interrupted';
  return `${style('stopped', 'yellow', color)} memlayer ${command.name}: ${why}; its temporary files are removed`;
}

function describeFailure(command: Command, error: unknown, debug: boolean, color: boolean): string {
  const head = style('error', 'red', color);
  if (error instanceof CliError) {
    const line = `${head} ${error.message}${error.hint ? ` — ${error.hint}` : ''}`;
    return debug && error.cause instanceof Error ? `${line}\n${error.cause.stack}` : line;
  }
  const err = error as Error & { code?: string };
  const line = `${head} memlayer ${command.name}: ${err.code ? `${err.code}: ` : ''}${err.message ?? String(error)} — run with --debug for the stack`;
  return debug ? `${line}\n${err.stack}` : line;
}
