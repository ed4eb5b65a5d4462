/** What loading weights cost: the counters a warm start keeps at zero (except filesStatted). */
export interface WeightStats {
  /** Weight files stat'ed at program load (one stat each). */
  filesStatted: number;
  /** Files whose identity matched a remembered record: header and digests taken from it. */
  filesKnown: number;
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

export function emptyWeightStats(): WeightStats {
  return {
    filesStatted: 0,
    filesKnown: 0,
    headersParsed: 0,
    filesOpened: 0,
    filesHashed: 0,
    tensorsHashed: 0,
    bytesHashed: 0,
    windowsMapped: 0,
    bytesMapped: 0,
  };
}

const processTotals = emptyWeightStats();

/** Counts into one program's stats and the process totals at once. */
export class WeightCounters {
  readonly stats = emptyWeightStats();

  add(field: keyof WeightStats, amount = 1): void {
    this.stats[field] += amount;
    processTotals[field] += amount;
  }
}

/** Totals of every program loaded in this process (like packingStats()); a copy. */
export function weightFileStats(): WeightStats {
  return { ...processTotals };
}

export function resetWeightFileStats(): void {
  Object.assign(processTotals, emptyWeightStats());
}
