/** What loading a program's weights cost: every load reads headers and hashes the tensors it keys. */
export interface WeightStats {
  /** Weight files stat'ed at program load (one stat each). */
  filesStatted: number;
  /** safetensors headers read and parsed. */
  headersParsed: number;
  /** Weight files opened (for a header, for hashing or because a layer missed the cache). */
  filesOpened: number;
  /** Distinct files from which at least one tensor was hashed. */
  filesHashed: number;
  tensorsHashed: number;
  bytesHashed: number;
  /** Windows of weight files mapped, and their bytes. */
  windowsMapped: number;
  bytesMapped: number;
}

/** One program's counters (per program, never process-wide). */
export class WeightCounters {
  readonly stats: WeightStats = {
    filesStatted: 0,
    headersParsed: 0,
    filesOpened: 0,
    filesHashed: 0,
    tensorsHashed: 0,
    bytesHashed: 0,
    windowsMapped: 0,
    bytesMapped: 0,
  };

  add(field: keyof WeightStats, amount = 1): void {
    this.stats[field] += amount;
  }
}
