import { resolve } from 'node:path';
import { CliError, EXIT_OK, EXIT_USAGE } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';
import { formatBytes } from '../format.js';
import { requirePath } from './inspect.js';

export const exportCommand: Command = {
  name: 'export',
  summary:
    'write a JSON program as an ExecuTorch program: <name>.pte + <name>.ptd, constant keys computed once, here',
  args: '<program.json>',
  options: {
    out: {
      type: 'string',
      value: '<dir>',
      description: 'folder for the files (default: beside the program)',
    },
    'constants-in-pte': {
      type: 'boolean',
      description: "keep the constants in the .pte's own named data instead of a .ptd",
    },
    json: { type: 'boolean', description: 'print what was written as one JSON document' },
  },
  async run(context) {
    const { exportProgram, ModuleLoaderError } = await import('@memlayer/module-loader');
    const { statSync } = await import('node:fs');
    const programPath = requirePath(context.positionals, 'a program.json');
    const out = stringFlag(context, 'out');
    let written: Awaited<ReturnType<typeof exportProgram>>;
    try {
      written = await exportProgram(resolve(context.cwd, programPath), {
        ...(out === undefined ? {} : { outDir: resolve(context.cwd, out) }),
        constants: boolFlag(context, 'constants-in-pte') ? 'pte' : 'ptd',
      });
    } catch (error) {
      if (!(error instanceof ModuleLoaderError)) throw error;
      throw new CliError(`${programPath}: ${error.code}: ${error.message}`, {
        exitCode: EXIT_USAGE,
        hint: 'only graph methods on XnnpackBackend can be exported',
        cause: error,
      });
    }
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(written, null, 2)}\n`);
      return EXIT_OK;
    }
    const files = [written.pte, ...(written.ptd === null ? [] : [written.ptd])];
    context.stdout(
      `${files.map((file) => `wrote ${file} (${formatBytes(statSync(file).size)})`).join('\n')}\n` +
        `${written.methods.length} method${written.methods.length === 1 ? '' : 's'} (${written.methods.join(', ')}), ${written.constants} constant${written.constants === 1 ? '' : 's'} keyed by SHA-256\n` +
        written.skipped
          .map(
            (m) =>
              `left out: method "${m.method}" runs on ${m.backend} (a .pte delegates to XNNPACK only)\n`,
          )
          .join('') +
        `run it: memlayer run ${written.pte}${written.ptd === null ? '' : ` --data ${written.ptd}`}\n`,
    );
    return EXIT_OK;
  },
};
