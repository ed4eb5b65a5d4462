import type { FallbackCount, FallbackReason } from './packed-storage.js';

/**
 * Why file mode stopped (or refused one reservation): carries the FallbackReason that the
 * heap bytes are counted under. Internal: it never escapes a FileStorage.
 */
export class StorageFallback extends Error {
  readonly reason: FallbackReason;

  constructor(reason: FallbackReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StorageFallback';
    this.reason = reason;
  }
}

/** Codes Node and mmap-native give a full disk, a quota or a file size limit. */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/** The reason an error counts under; `phase` decides for errors that say nothing themselves. */
export function reasonOf(error: unknown, phase: 'open' | 'io'): FallbackReason {
  if (error instanceof StorageFallback) return error.reason;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NO_SPACE_CODES.has(code)) return 'enospc';
  if (code === 'ERR_MMAP_LOCK_TIMEOUT') return 'lock-busy';
  return phase === 'open' ? 'open-failed' : 'io-error';
}

/** Heap reservations of a file storage, counted per reason in entries and bytes. */
export class FallbackLedger {
  readonly #counts = new Map<FallbackReason, { count: number; bytes: number }>();

  add(reason: FallbackReason, bytes: number): void {
    const counted = this.#counts.get(reason);
    if (counted === undefined) this.#counts.set(reason, { count: 1, bytes });
    else {
      counted.count++;
      counted.bytes += bytes;
    }
  }

  snapshot(): Readonly<Record<string, FallbackCount>> {
    const out: Record<string, FallbackCount> = {};
    for (const [reason, { count, bytes }] of this.#counts) out[reason] = { count, bytes };
    return out;
  }
}
