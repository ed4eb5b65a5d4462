import { alignUp, V3_HEADER_SIZE, type XpwcEntry } from '@memlayer/cache-format';

export interface EvictionOptions {
  readonly maxFileBytes?: number | undefined;
  /** Names never evicted (held by a live runtime). */
  readonly keep?: ReadonlySet<string> | undefined;
  /** Monotonic use ticks by name; an entry with none counts as the least recently used. */
  readonly lastUsed?: ReadonlyMap<string, number> | undefined;
}

/** Bytes an index entry takes in a v3 trailer, generously (name, fixed fields, layout). */
const TRAILER_BYTES_PER_ENTRY = 128;
const FOOTER_ALLOWANCE = 4096;

/**
 * Splits the live entries into those a compacted file keeps and those it evicts to stay
 * within `maxFileBytes`: least recently used first, never one in `keep`.
 */
export function chooseEvictions<E extends XpwcEntry>(
  entries: readonly E[],
  page: number,
  options: EvictionOptions,
): { kept: E[]; evicted: E[] } {
  const max = options.maxFileBytes;
  if (max === undefined) return { kept: [...entries], evicted: [] };
  const sizeOf = (entry: E) =>
    alignUp(Math.max(entry.dataSize, 1), page) + TRAILER_BYTES_PER_ENTRY + entry.name.length;
  let total = V3_HEADER_SIZE + FOOTER_ALLOWANCE;
  for (const entry of entries) total += sizeOf(entry);
  const used = (entry: E) => options.lastUsed?.get(entry.name) ?? -1;
  const candidates = entries
    .filter((entry) => !options.keep?.has(entry.name))
    .sort((a, b) => used(a) - used(b));
  const evicted = new Set<E>();
  for (const entry of candidates) {
    if (total <= max) break;
    evicted.add(entry);
    total -= sizeOf(entry);
  }
  return {
    kept: entries.filter((entry) => !evicted.has(entry)),
    evicted: [...evicted],
  };
}
