import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type EntryColumns, readTrailer } from '@memlayer/cache-format';
import {
  crc32c,
  crc32cImplementation,
  type Mapping,
  NO_GC_WINDOW_BYTES,
  openMappedFile,
} from '@memlayer/mmap-native';
import { nowMs } from './measure.js';

/**
 * Largest window mapped at once, as the cache's own loader maps: mmap-native's window that
 * starts no garbage collection (measured faster than 1 GiB windows at 1 GiB: 19.7 vs
 * 22.5 ms, medians of 7).
 */
const WINDOW_BYTES = NO_GC_WINDOW_BYTES;
/** A window starting with a larger entry spans up to 1 GiB, as the loader's do. */
const LARGE_WINDOW_BYTES = 1024 * 1024 * 1024;

export interface FloorResult {
  /** Open + trailer decode + mapping + name → view table, in-process milliseconds. */
  readonly floorMs: number;
  readonly entries: number;
  readonly mappings: number;
}

/** The floor's table: every entry's bytes by name, over read-only windows of the file. */
export interface FloorTable {
  readonly table: Map<string, Uint8Array>;
  readonly mappings: number;
  /** Unmaps the windows and closes the file. */
  close(): void;
}

/**
 * The least work a warm start can do: open the cache file, decode its index, map the data
 * in windows no entry crosses, and build a name → bytes table. No packing, no weights, no
 * module: what "a warm start costs a map and an index read" means, measured.
 */
export function measureFloor(cachePath: string): FloorResult {
  const start = nowMs();
  const floor = openFloorTable(cachePath);
  const floorMs = nowMs() - start;
  floor.close();
  return { floorMs, entries: floor.table.size, mappings: floor.mappings };
}

/** measureFloor's work: the table of the cache file at `cachePath`, left open. */
export function openFloorTable(cachePath: string): FloorTable {
  const fd = openSync(cachePath, 'r');
  let size: number;
  let columns: EntryColumns;
  try {
    size = fstatSync(fd).size;
    // The index is checked with the fastest CRC32C here, as the cache checks it.
    const { trailer } = readTrailer(
      (offset, length) => {
        const out = new Uint8Array(length);
        const read = readSync(fd, out, 0, length, offset);
        return out.subarray(0, read);
      },
      size,
      crc32cImplementation() === null ? {} : { crc32c: (bytes) => crc32c(bytes) },
    );
    columns = trailer.columns;
  } finally {
    closeSync(fd);
  }
  const file = openMappedFile(cachePath, { mode: 'r' });
  const mappings: Mapping[] = [];
  const table = new Map<string, Uint8Array>();
  const close = () => {
    for (const mapping of mappings) mapping.close();
    file.close();
  };
  try {
    let window: Mapping | null = null;
    let windowStart = 0;
    // Windows are cut in file order (a v2 index written by ExecuTorch is in hash-map order).
    const { names, fileOffsets, dataSizes } = columns;
    const byOffset = Array.from({ length: columns.length }, (_, i) => i).sort(
      (a, b) => (fileOffsets[a] as number) - (fileOffsets[b] as number),
    );
    for (const i of byOffset) {
      const fileOffset = fileOffsets[i] as number;
      const dataSize = dataSizes[i] as number;
      const end = fileOffset + dataSize;
      if (window === null || end > windowStart + window.length) {
        windowStart = fileOffset;
        const span = dataSize > WINDOW_BYTES ? LARGE_WINDOW_BYTES : WINDOW_BYTES;
        const length = Math.min(Math.max(span, dataSize), size - windowStart);
        window = file.map(windowStart, length, { writable: false });
        mappings.push(window);
      }
      const bytes = window.bytes();
      const from = fileOffset - windowStart;
      table.set(names[i] as string, bytes.subarray(from, from + dataSize));
    }
  } catch (error) {
    close();
    throw error;
  }
  return { table, mappings: mappings.length, close };
}
