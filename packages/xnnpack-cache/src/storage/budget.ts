import { alignUp } from '@memlayer/cache-format';
import { compact } from './compact.js';
import type { ResolvedFileStorageOptions } from './file-storage-options.js';
import { type CommittedIndex, dataStartOf } from './index-io.js';
import type { StoredEntry } from './packed-storage.js';
import { emitCacheWarning } from './warnings.js';

/** Room kept for the next trailer when checking a reservation against the budget. */
const TRAILER_ALLOWANCE = 16 << 10;
/** Room for growth to leave per entry past 64 entries: a v3 entry is 64 bytes plus its name. */
const TRAILER_BYTES_PER_ENTRY = 256;

/**
 * The disk budget (`maxFileBytes`) and the close-time compaction. A reservation that would
 * take the live bytes past the budget goes to the heap ('over-budget'), and so does one
 * the file cannot grow for: growth never takes the file past the budget less room for the
 * next trailer. At close, when the budget turned a reservation away (orphans may fill the
 * file) or the orphans pass `autoCompactThreshold`, the file is compacted, evicting least
 * recently used entries until the live bytes fit.
 */
export class BudgetKeeper {
  readonly #options: ResolvedFileStorageOptions;
  readonly #lastUsed = new Map<string, number>();
  #tick = 0;
  #evictedEntries = 0;
  #evictedBytes = 0;
  #warned = false;
  /** The budget sent a reservation to the heap. */
  #refused = false;

  readonly #pageSize: number;

  constructor(options: ResolvedFileStorageOptions, pageSize: number) {
    this.#options = options;
    this.#pageSize = pageSize;
  }

  /** Whether `length` more bytes keep the file's live bytes within the budget. */
  fits(committed: CommittedIndex | null, unsavedBytes: number, length: number): boolean {
    const max = this.#options.maxFileBytes;
    if (max === null) return true;
    let live = dataStartOf(committed?.version ?? this.#options.format) + TRAILER_ALLOWANCE;
    for (const entry of committed?.entries ?? [])
      live += alignUp(Math.max(entry.dataSize, 1), this.#pageSize);
    const fits = live + unsavedBytes + length <= max;
    if (!fits) this.refused();
    return fits;
  }

  /**
   * The largest size growth may give the file: the budget less room for a trailer of the
   * committed entries and `newEntries` more (no limit without a budget).
   */
  growthEnd(committed: CommittedIndex | null, newEntries: number): number {
    const max = this.#options.maxFileBytes;
    if (max === null) return Number.POSITIVE_INFINITY;
    const entries = (committed?.entries.length ?? 0) + newEntries + 1;
    return max - Math.max(TRAILER_ALLOWANCE, entries * TRAILER_BYTES_PER_ENTRY);
  }

  /** A reservation went to the heap for the budget (warned once). */
  refused(): void {
    this.#refused = true;
    if (this.#warned) return;
    this.#warned = true;
    emitCacheWarning(
      'MEMLAYER_CACHE_OVER_BUDGET',
      `Cache file ${this.#options.path} is at its budget of ${this.#options.maxFileBytes} bytes; new entries stay on the heap`,
    );
  }

  /**
   * Remembers the use order of entries a runtime build just persisted: the cache's
   * `lastUsed` when it gives one; else an entry packed by this build or held by a runtime
   * (`refCount` > 0) counts as used now, and others keep their earlier tick.
   */
  note(entries: readonly StoredEntry[], isFresh: (region: StoredEntry['region']) => boolean): void {
    this.#tick++;
    for (const entry of entries) {
      if (entry.lastUsed !== undefined) this.#lastUsed.set(entry.name, entry.lastUsed);
      else if (isFresh(entry.region) || (entry.refCount ?? 0) > 0) {
        this.#lastUsed.set(entry.name, this.#tick);
      }
    }
  }

  evicted(): { entries: number; bytes: number } {
    return { entries: this.#evictedEntries, bytes: this.#evictedBytes };
  }

  /** After the file is closed: compact when over budget or past the orphan threshold. */
  afterClose(fileBytes: number, orphanRatio: number): void {
    const { maxFileBytes, autoCompactThreshold, path, backend } = this.#options;
    const overBudget = maxFileBytes !== null && (fileBytes > maxFileBytes || this.#refused);
    const orphaned = autoCompactThreshold !== undefined && orphanRatio > autoCompactThreshold;
    if (!overBudget && !orphaned) return;
    try {
      const result = compact(path, {
        backend,
        followSymlinks: this.#options.followSymlinks,
        lockTimeoutMs: this.#options.lockTimeoutMs,
        ...(maxFileBytes === null
          ? {}
          : // At close no runtime of this process holds an entry; other processes keep
            // their mappings of the old file, so eviction never pulls bytes from under them.
            { maxFileBytes, lastUsed: this.#lastUsed }),
      });
      this.#evictedEntries += result.evictedEntries;
      this.#evictedBytes += result.evictedBytes;
    } catch (error) {
      emitCacheWarning(
        'MEMLAYER_CACHE_COMPACT_FAILED',
        `Automatic compaction of ${path} failed; the file stays as it is`,
        error,
      );
    }
  }
}
