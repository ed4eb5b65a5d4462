import { constants as bufferConstants } from 'node:buffer';
import type { XpwcEntry } from '@memlayer/cache-format';
import { type Mapping, NO_GC_WINDOW_BYTES } from '@memlayer/mmap-native';
import { PACKED_ALLOCATION_ALIGNMENT } from '../alignment.js';
import type { CacheFile } from './cache-file.js';

/**
 * Default span of one load mapping: mmap-native's window that starts no garbage collection
 * (32 MiB), so a warm start of any size runs none for its mappings (one per GiB mapped
 * with 1 GiB windows), at the price of an mmap call per 32 MiB.
 */
export const DEFAULT_LOAD_WINDOW_BYTES = NO_GC_WINDOW_BYTES;

/** The largest single mapping this runtime can hand out as one ArrayBuffer. */
export const MAX_MAPPING_BYTES = bufferConstants.MAX_LENGTH;

/**
 * Span a window grows to when its first entry is larger than a window. A mapping of 64 MiB
 * or more starts a garbage collection however large it is, so large entries share a few
 * large mappings instead of one each (a 5 GiB cache of 256 MiB entries: 5 mappings, not 20).
 */
export const LARGE_WINDOW_BYTES = 1 << 30;

export interface MappedEntries {
  /** Read-only mappings covering the loaded entries, in file order. */
  readonly windows: Mapping[];
  /** File offset where each window starts. */
  readonly windowStarts: number[];
  /**
   * Per entry of the input (same order): the window that holds it, or -1 when it cannot
   * be served. Its bytes are a view made when asked for (entryBytes): a warm start that
   * never reads an entry makes no view of it.
   */
  readonly windowOf: Int32Array;
}

/** The bytes of an entry in the window mapEntriesInWindows put it in. */
export function entryBytes(
  mapped: MappedEntries,
  window: number,
  fileOffset: number,
  dataSize: number,
): Uint8Array {
  const mapping = mapped.windows[window] as Mapping;
  return new Uint8Array(
    mapping.buffer,
    fileOffset - (mapped.windowStarts[window] as number),
    dataSize,
  );
}

/** Indices of the entries a window can serve, in file order; null when that is every entry in index order. */
function servableInFileOrder(entries: readonly XpwcEntry[], dataStart: number): number[] | null {
  let sorted = true;
  let all = true;
  let lastOffset = -1;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as XpwcEntry;
    if (!isServable(entry, dataStart)) all = false;
    else if (entry.fileOffset < lastOffset) sorted = false;
    else lastOffset = entry.fileOffset;
  }
  // Committed v3 indexes are in file order: the usual load builds no order list.
  if (sorted && all) return null;
  const order: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    if (isServable(entries[i] as XpwcEntry, dataStart)) order.push(i);
  }
  if (!sorted) {
    order.sort(
      (a, b) => (entries[a] as XpwcEntry).fileOffset - (entries[b] as XpwcEntry).fileOffset,
    );
  }
  return order;
}

function isServable(entry: XpwcEntry, dataStart: number): boolean {
  return (
    entry.fileOffset >= dataStart &&
    entry.fileOffset % PACKED_ALLOCATION_ALIGNMENT === 0 &&
    entry.dataSize <= MAX_MAPPING_BYTES
  );
}

/**
 * Maps the committed entries read-only in windows of at most `windowBytes`: an entry never
 * crosses a window, and a window that starts with an entry larger than `windowBytes` may
 * span up to LARGE_WINDOW_BYTES (an entry larger than that gets a mapping of its own, up to
 * MAX_MAPPING_BYTES). So a cache of any size loads mapped, with few mappings rather than
 * one per entry or one for the whole data region.
 * Entries before `dataStart` or not aligned for a Float32Array view get null (repacked).
 */
export function mapEntriesInWindows(
  file: CacheFile,
  entries: readonly XpwcEntry[],
  dataStart: number,
  windowBytes: number,
): MappedEntries {
  const windowOf = new Int32Array(entries.length).fill(-1);
  const order = servableInFileOrder(entries, dataStart);
  const count = order === null ? entries.length : order.length;
  const windows: Mapping[] = [];
  const windowStarts: number[] = [];
  let k = 0;
  while (k < count) {
    // A window starts at entry k and takes the entries after it while its span fits.
    const first = entries[order === null ? k : (order[k] as number)] as XpwcEntry;
    const start = first.fileOffset;
    let end = start + first.dataSize;
    let next = k + 1;
    const limit =
      first.dataSize > windowBytes ? Math.max(windowBytes, LARGE_WINDOW_BYTES) : windowBytes;
    for (; next < count; next++) {
      const entry = entries[order === null ? next : (order[next] as number)] as XpwcEntry;
      const entryEnd = entry.fileOffset + entry.dataSize;
      const spanEnd = Math.max(entryEnd, end);
      if (spanEnd - start > limit) break;
      end = spanEnd;
    }
    // A zero-length entry still needs one byte mapped to have a buffer to view.
    const window = windows.length;
    windows.push(file.mapped.map(start, Math.max(end - start, 1), { writable: false }));
    windowStarts.push(start);
    for (; k < next; k++) windowOf[order === null ? k : (order[k] as number)] = window;
  }
  return { windows, windowStarts, windowOf };
}
