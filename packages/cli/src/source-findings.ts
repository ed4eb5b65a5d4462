import { ModuleLoaderError, verifyWeightSources } from '@memlayer/module-loader';
import { CliError, EXIT_USAGE } from './cli-error.js';

export interface SourceFinding {
  severity: 'problem' | 'warning';
  code: string;
  message: string;
}

/**
 * Re-hashes the program's weight files (trusting nothing remembered) and compares them with
 * the digests recorded next to the cache (`<cache>.sources.json`), which a warm start trusts
 * instead of reading the weights. Returns the findings and the bytes hashed.
 */
export function checkWeightSources(
  cachePath: string,
  programPath: string,
  programArg: string,
): {
  findings: SourceFinding[];
  files: ReturnType<typeof verifyWeightSources>['files'];
  bytesHashed: number;
} {
  let checked: ReturnType<typeof verifyWeightSources>;
  try {
    checked = verifyWeightSources(cachePath, programPath);
  } catch (error) {
    if (!(error instanceof ModuleLoaderError)) throw error;
    throw new CliError(`${programArg}: ${error.code}: ${error.message}`, {
      exitCode: EXIT_USAGE,
      hint: 'give the program.json the cache was filled from',
      cause: error,
    });
  }
  const findings: SourceFinding[] = [];
  for (const file of checked.files) {
    if (file.status === 'mismatch') {
      findings.push({
        severity: 'problem',
        code: 'SOURCE_MISMATCH',
        message: `${file.path}: ${file.mismatched.length} of ${file.tensors} tensors no longer match their recorded SHA-256 while the file looks unchanged (${file.mismatched.slice(0, 3).join(', ')}${file.mismatched.length > 3 ? ', …' : ''}); a warm start would trust the record and the method plans made from it: delete ${cachePath}.sources.json and ${cachePath}.plans.json`,
      });
    } else if (file.status === 'changed') {
      findings.push({
        severity: 'warning',
        code: 'SOURCE_CHANGED',
        message: `${file.path} changed since it was recorded; the next load re-hashes it`,
      });
    } else if (file.status === 'unrecorded') {
      findings.push({
        severity: 'warning',
        code: 'SOURCE_UNRECORDED',
        message: `${file.path} is not in the record next to the cache (never loaded with it)`,
      });
    }
  }
  return { findings, files: checked.files, bytesHashed: checked.stats.bytesHashed };
}
