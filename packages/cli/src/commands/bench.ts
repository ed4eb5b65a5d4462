import { CliError, EXIT_USAGE } from '../cli-error.js';
import type { Command } from '../command.js';

/**
 * The benchmark suite left the published CLI (it forks measurement processes and compiles
 * a C reference): it is the private workspace package @memlayer/bench, run from a clone of
 * the repository. This entry only says where it went.
 */
export const benchCommand: Command = {
  name: 'bench',
  summary:
    'moved out of the published CLI: run `pnpm bench` (or `pnpm bench:quick`) from a clone of the memlayer repository',
  args: '',
  // The suite's old options still parse, so `memlayer bench --quick` gets the message below
  // rather than "unknown option".
  options: {
    quick: { type: 'boolean', description: 'ignored (the suite moved)' },
    out: { type: 'string', value: '<dir>', description: 'ignored (the suite moved)' },
    json: { type: 'boolean', description: 'ignored (the suite moved)' },
    only: { type: 'string', value: '<sections>', description: 'ignored (the suite moved)' },
  },
  run() {
    throw new CliError(
      'memlayer bench is no longer part of the published CLI; the benchmark suite is the repository package packages/bench',
      {
        exitCode: EXIT_USAGE,
        hint: 'in a clone of https://github.com/memlayer/memlayer run `pnpm bench` (full run, report in docs/benchmarks) or `pnpm bench:quick`',
      },
    );
  },
};
