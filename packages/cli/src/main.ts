import { parseArgs } from 'node:util';
import { CliError, EXIT_OK, EXIT_USAGE } from './cli-error.js';
import type { Command } from './command.js';
import { commands } from './commands/index.js';
import { style } from './style.js';

const VERSION_TEXT = 'memlayer (@memlayer/cli 0.1.0)';

function helpText(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    'memlayer — packed-weights caches, programs and the memory they use',
    '',
    'Usage: memlayer <command> [options]',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Every command: --help, --debug (stack traces). Tables: --json for one JSON document.',
    'Exit codes: 0 ok, 1 problems found or command failed, 2 bad usage or unreadable input.',
  ].join('\n');
}

/** Runs one CLI invocation and returns its exit code; never throws. */
export async function main(argv: string[], io = defaultIo()): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((arg) => arg !== '--debug');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(`${helpText()}\n`);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${VERSION_TEXT}\n`);
    return EXIT_OK;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    io.stderr(`memlayer: unknown command "${name}"; run \`memlayer --help\` for the list\n`);
    return EXIT_USAGE;
  }
  try {
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(`${command.summary}\n\nUsage: ${command.usage}\n`);
      return EXIT_OK;
    }
    return await command.run({ ...parse(command, rest), ...io });
  } catch (error) {
    io.stderr(`${describeFailure(command, error, debug)}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

function parse(command: Command, args: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    throw new CliError(`memlayer ${command.name}: ${(error as Error).message}`, {
      exitCode: EXIT_USAGE,
      hint: `usage: ${command.usage}`,
    });
  }
}

function describeFailure(command: Command, error: unknown, debug: boolean): string {
  const color = process.stderr.isTTY === true && !process.env['NO_COLOR'];
  const head = style('error', 'red', color);
  if (error instanceof CliError) {
    const line = `${head} ${error.message}${error.hint ? ` — ${error.hint}` : ''}`;
    return debug && error.cause instanceof Error ? `${line}\n${error.cause.stack}` : line;
  }
  const err = error as Error & { code?: string };
  const line = `${head} memlayer ${command.name}: ${err.code ? `${err.code}: ` : ''}${err.message ?? String(error)} — run with --debug for the stack`;
  return debug ? `${line}\n${err.stack}` : line;
}

function defaultIo() {
  return {
    stdout: (text: string) => process.stdout.write(text),
    stderr: (text: string) => process.stderr.write(text),
  };
}
