import { invalidArgument } from '../../errors.js';

export interface ExportProgramOptions {
  /** Folder for the files; default: the manifest's folder. */
  outDir?: string;
  /** Where constants go: a `.ptd` beside the `.pte` (default) or the `.pte`'s named data. */
  constants?: 'ptd' | 'pte';
}

export interface ExportedProgram {
  /** Path of the `.pte` written. */
  pte: string;
  /** Path of the `.ptd` written, or null (constants in the `.pte`, or none at all). */
  ptd: string | null;
  /** Method names, in manifest order (one execution plan each). */
  methods: string[];
  /** Methods left out: they run on another backend (a .pte delegates to XNNPACK only). */
  skipped: { method: string; backend: string }[];
  /** Distinct constants (by content) written. */
  constants: number;
}

/**
 * Exports a JSON program as ExecuTorch files: `<name>.pte` (+ `<name>.ptd`), where `name`
 * is the manifest's file name without `.json`. Each graph method becomes one execution
 * plan whose single instruction calls one XNNPACK delegate holding the whole graph.
 */
export async function exportProgram(
  manifestPath: string,
  options: ExportProgramOptions = {},
): Promise<ExportedProgram> {
  if (typeof manifestPath !== 'string') invalidArgument('a string', 'manifestPath', manifestPath);
  const where = options.constants ?? 'ptd';
  if (where !== 'ptd' && where !== 'pte') {
    invalidArgument('"ptd" or "pte"', 'options.constants', options.constants);
  }
  if (options.outDir !== undefined && typeof options.outDir !== 'string') {
    invalidArgument('a string', 'options.outDir', options.outDir);
  }
  const { writeProgramFiles } = await import('./program-files.js');
  return writeProgramFiles(manifestPath, where, options);
}
