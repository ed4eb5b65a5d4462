// `memlayer verify --program model.pte`: every named constant of an ExecuTorch program
// re-hashed against its key (a warm start trusts the keys, as ExecuTorch does).
import { CliError, EXIT_USAGE } from './cli-error.js';
import type { Finding } from './commands/verify.js';

export interface ProgramCheck {
  findings: Finding[];
  constants: number;
  bytesHashed: number;
}

export async function verifyProgram(
  programPath: string,
  dataFiles: string[],
): Promise<ProgramCheck> {
  const { ModuleLoaderError, PteProgram, verifyPteConstants } = await import(
    '@memlayer/module-loader'
  );
  let program: InstanceType<typeof PteProgram> | undefined;
  try {
    program = new PteProgram(programPath, dataFiles);
    const checks = verifyPteConstants(program);
    const findings: Finding[] = checks
      .filter((check) => !check.ok)
      .map((check) => ({
        severity: 'problem',
        code: 'CONSTANT_MISMATCH',
        message: `${check.file}: constant ${check.key} (${check.bytes} bytes) does not hash to its key; a warm start would serve the entries packed from the right bytes, a cold start refuses it`,
      }));
    return {
      findings,
      constants: checks.length,
      bytesHashed: checks.reduce((sum, check) => sum + check.bytes, 0),
    };
  } catch (error) {
    if (!(error instanceof ModuleLoaderError)) throw error;
    throw new CliError(`${programPath}: ${error.code}: ${error.message}`, {
      exitCode: EXIT_USAGE,
      cause: error,
    });
  } finally {
    program?.close();
  }
}
