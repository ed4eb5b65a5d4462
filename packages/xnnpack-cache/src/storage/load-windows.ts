import { constants as bufferConstants } from 'node:buffer';
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

/** Where each entry of an index lies: entry `i` at `fileOffsets[i]`, `dataSizes[i]` bytes. */
export interface EntryExtents {
  readonly fileOffsets: ArrayLike<number>;
  readonly dataSizes: ArrayLike<number>;
}

/** Indices of the entries a window can serve, in file order; null when that is every entry in index order. */
function servableInFileOrder(
  extents: EntryExtents,
  count: number,
  dataStart: number,
): number[] | null {
  const { fileOffsets, dataSizes } = extents;
  let sorted = true;
  let all = true;
  let lastOffset = -1;
  for (let i = 0; i < count; i++) {
    const fileOffset = fileOffsets[i] as number;
    if (!isServable(fileOffset, dataSizes[i] as number, dataStart)) all = false;
    else if (fileOffset < lastOffset) sorted = false;
    else lastOffset = fileOffset;
  }
  // Committed v3 indexes are in file order: the usual load builds no order list.
  if (sorted && all) return null;
  const order: number[] = [];
  for (let i = 0; i < count; i++) {
    if (isServable(fileOffsets[i] as number, dataSizes[i] as number, dataStart)) order.push(i);
  }
  if (!sorted) order.sort((a, b) => (fileOffsets[a] as number) - (fileOffsets[b] as number));
  return order;
}

function isServable(fileOffset: number, dataSize: number, dataStart: number): boolean {
  return (
    fileOffset >= dataStart &&
    fileOffset % PACKED_ALLOCATION_ALIGNMENT === 0 &&
    dataSize <= MAX_MAPPING_BYTES
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
  extents: EntryExtents,
  count: number,
  dataStart: number,
  windowBytes: number,
): MappedEntries {
  const { fileOffsets, dataSizes } = extents;
  const windowOf = new Int32Array(count).fill(-1);
  const order = servableInFileOrder(extents, count, dataStart);
  const servable = order === null ? count : order.length;
  const windows: Mapping[] = [];
  const windowStarts: number[] = [];
  let k = 0;
  while (k < servable) {
    // A window starts at entry k and takes the entries after it while its span fits.
    const first = order === null ? k : (order[k] as number);
    const start = fileOffsets[first] as number;
    const firstSize = dataSizes[first] as number;
    let end = start + firstSize;
    let next = k + 1;
    const limit = firstSize > windowBytes ? Math.max(windowBytes, LARGE_WINDOW_BYTES) : windowBytes;
    for (; next < servable; next++) {
      const entry = order === null ? next : (order[next] as number);
      const entryEnd = (fileOffsets[entry] as number) + (dataSizes[entry] as number);
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
