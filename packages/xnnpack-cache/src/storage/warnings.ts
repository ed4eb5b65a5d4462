/** Stable codes of the process warnings file-backed storage emits (process.on('warning')). */
export type WeightsCacheWarningCode =
  | 'MEMLAYER_CACHE_HEAP_FALLBACK'
  | 'MEMLAYER_CACHE_REBUILT'
  | 'MEMLAYER_CACHE_CORRUPT_ENTRY'
  | 'MEMLAYER_CACHE_COMPACT_FAILED'
  | 'MEMLAYER_CACHE_COMMIT_FAILED'
  | 'MEMLAYER_CACHE_LENIENT_READ'
  | 'MEMLAYER_CACHE_OVER_BUDGET'
  | 'MEMLAYER_CACHE_CPU_UNKNOWN'
  | 'MEMLAYER_CACHE_AMBIGUOUS_ENTRY'
  | 'MEMLAYER_CACHE_DAMAGED_COMMIT';

export const WARNING_TYPE = 'WeightsCacheWarning';

export function emitCacheWarning(
  code: WeightsCacheWarningCode,
  message: string,
  cause?: unknown,
): void {
  const detail = cause instanceof Error ? `${cause.name}: ${cause.message}` : undefined;
  process.emitWarning(
    message,
    detail === undefined ? { type: WARNING_TYPE, code } : { type: WARNING_TYPE, code, detail },
  );
}
