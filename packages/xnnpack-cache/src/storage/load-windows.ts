import { constants as bufferConstants } from 'node:buffer';
import type { XpwcEntry } from '@memlayer/cache-format';
import type { Mapping } from '@memlayer/mmap-native';
import { PACKED_ALLOCATION_ALIGNMENT } from '../alignment.js';
import type { CacheFile } from './cache-file.js';

/**
 * Default span of one load mapping. Node 20 caps one ArrayBuffer (so one mapping) at 4 GiB;
 * 1 GiB windows keep a 5 GiB cache to a handful of mappings (few external ArrayBuffers for
 * V8 to track) without asking for one huge contiguous range of address space.
 */
export const DEFAULT_LOAD_WINDOW_BYTES = 1 << 30;

/** The largest single mapping this runtime can hand out as one ArrayBuffer. */
export const MAX_MAPPING_BYTES = bufferConstants.MAX_LENGTH;

export interface MappedEntries {
  /** Read-only mappings covering the loaded entries, in file order. */
  readonly windows: Mapping[];
  /** Per entry of the input (same order): its bytes, or null when it cannot be served. */
  readonly views: (Uint8Array | null)[];
}

/**
 * Maps the committed entries read-only in windows of at most `windowBytes`: an entry never
 * crosses a window, and an entry larger than a window gets a mapping of its own (up to
 * MAX_MAPPING_BYTES). So a cache of any size loads mapped, with a few large mappings rather
 * than one per entry or one for the whole data region.
 * Entries before `dataStart` or not aligned for a Float32Array view get null (repacked).
 */
export function mapEntriesInWindows(
  file: CacheFile,
  entries: readonly XpwcEntry[],
  dataStart: number,
  windowBytes: number,
): MappedEntries {
  const views: (Uint8Array | null)[] = new Array(entries.length).fill(null);
  const order: number[] = [];
  // Committed v3 indexes are already in file order: sort only when they are not.
  let sorted = true;
  let lastOffset = -1;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as XpwcEntry;
    const servable =
      entry.fileOffset >= dataStart &&
      entry.fileOffset % PACKED_ALLOCATION_ALIGNMENT === 0 &&
      entry.dataSize <= MAX_MAPPING_BYTES;
    if (!servable) continue;
    if (entry.fileOffset < lastOffset) sorted = false;
    lastOffset = entry.fileOffset;
    order.push(i);
  }
  if (!sorted) {
    order.sort(
      (a, b) => (entries[a] as XpwcEntry).fileOffset - (entries[b] as XpwcEntry).fileOffset,
    );
  }

  const windows: Mapping[] = [];
  let group: number[] = [];
  let start = 0;
  let end = 0;
  const flush = () => {
    if (group.length === 0) return;
    // A zero-length entry still needs one byte mapped to have a buffer to view.
    const mapping = file.mapped.map(start, Math.max(end - start, 1), { writable: false });
    windows.push(mapping);
    const buffer = mapping.buffer;
    for (const i of group) {
      const entry = entries[i] as XpwcEntry;
      views[i] = new Uint8Array(buffer, entry.fileOffset - start, entry.dataSize);
    }
    group = [];
  };
  for (const i of order) {
    const entry = entries[i] as XpwcEntry;
    const entryEnd = entry.fileOffset + entry.dataSize;
    if (group.length > 0 && Math.max(end, entryEnd) - start > windowBytes) flush();
    if (group.length === 0) {
      start = entry.fileOffset;
      end = entryEnd;
    }
    group.push(i);
    end = Math.max(end, entryEnd);
  }
  flush();
  return { windows, views };
}
