import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeModel } from './model.js';
import type { BenchOptions, ModelSpec } from './types.js';

/**
 * The program of `spec` in the scratch folder, written once per run: a `.pte` whose
 * constants are in a `.ptd` beside it, exported from the JSON program (a JSON program
 * hashes its weights at every load; a `.pte` carries their keys, as ExecuTorch's do).
 */
export async function programFor(options: BenchOptions, spec: ModelSpec): Promise<string> {
  const dir = join(options.workDir, `model-${spec.layers}x${spec.dim}`);
  const json = join(dir, 'program.json');
  const pte = join(dir, 'program.pte');
  if (!existsSync(json)) {
    options.progress(
      `writing the ${spec.label} model (${spec.layers} layers of ${spec.dim}x${spec.dim})`,
    );
    writeModel(dir, spec);
  }
  if (!existsSync(pte)) {
    options.progress(`exporting the ${spec.label} model as a .pte and a .ptd`);
    const { exportProgram } = await import('@memlayer/module-loader');
    await exportProgram(json);
  }
  return pte;
}

/** The data files a program is opened with: a `.pte`'s `.ptd` beside it (programFor). */
export function dataFilesOf(program: string): string[] {
  return program.endsWith('.pte') ? [join(dirname(program), 'program.ptd')] : [];
}

export function cachePathFor(options: BenchOptions, spec: ModelSpec, tag: string): string {
  return join(options.workDir, `cache-${spec.layers}x${spec.dim}-${tag}.xpwc`);
}
