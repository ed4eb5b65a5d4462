import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeModel } from './model.js';
import type { BenchOptions, ModelSpec } from './types.js';

/** The program of `spec` in the scratch folder, written once per run. */
export function programFor(options: BenchOptions, spec: ModelSpec): string {
  const dir = join(options.workDir, `model-${spec.layers}x${spec.dim}`);
  const path = join(dir, 'program.json');
  if (!existsSync(path)) {
    options.progress(
      `writing the ${spec.label} model (${spec.layers} layers of ${spec.dim}x${spec.dim})`,
    );
    writeModel(dir, spec);
  }
  return path;
}

export function cachePathFor(options: BenchOptions, spec: ModelSpec, tag: string): string {
  return join(options.workDir, `cache-${spec.layers}x${spec.dim}-${tag}.xpwc`);
}
