import { loadProgram } from '../program/program.js';
import { SafetensorsFile } from './file.js';
import { sameIdentity } from './identity.js';
import { SourceRecord } from './source-record.js';
import { WeightCounters, type WeightStats } from './weight-stats.js';

export interface SourceCheck {
  /** Real path of a weight file of the program. */
  readonly path: string;
  /**
   * ok: identity and every recorded digest match the bytes; unrecorded: the record does not
   * know the file; changed: the file's identity changed since it was recorded (the next load
   * re-hashes it); mismatch: same identity, other bytes (written behind the file system's
   * back, or a tampered record): entries packed from it must not be trusted.
   */
  readonly status: 'ok' | 'unrecorded' | 'changed' | 'mismatch';
  /** Tensors re-hashed, and those whose digest differs from the record. */
  readonly tensors: number;
  readonly mismatched: readonly string[];
}

/**
 * Re-hashes every recorded tensor of `programPath`'s weight files, trusting nothing in
 * memory, and compares with `<cachePath>.sources.json` (what `memlayer verify --full`
 * runs when given the program).
 */
export function verifyWeightSources(
  cachePath: string,
  programPath: string,
): { files: SourceCheck[]; stats: WeightStats } {
  const record = new SourceRecord(cachePath);
  const program = loadProgram(programPath, 'minimal');
  const counters = new WeightCounters();
  const files: SourceCheck[] = [];
  try {
    for (const { path } of program.namedData.files) {
      const recorded = record.entry(path);
      if (recorded === undefined) {
        files.push({ path, status: 'unrecorded', tensors: 0, mismatched: [] });
        continue;
      }
      const file = SafetensorsFile.open(path, counters, { trustMemory: false });
      try {
        const mismatched: string[] = [];
        let tensors = 0;
        for (const [name, digest] of recorded.digests) {
          const info = file.tensors.get(name);
          tensors++;
          if (info === undefined || file.digest(info) !== digest) mismatched.push(name);
        }
        const status = !sameIdentity(recorded.identity, file.identity)
          ? 'changed'
          : mismatched.length > 0
            ? 'mismatch'
            : 'ok';
        files.push({ path, status, tensors, mismatched });
      } finally {
        file.close();
      }
    }
  } finally {
    program.close();
  }
  return { files, stats: { ...counters.stats } };
}
