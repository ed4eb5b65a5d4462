import { type Mapping, mappingMemoryStats, readSmapsTable } from '@memlayer/mmap-native';

/**
 * Resident memory of a cache's file mappings, summed from /proc/self/smaps:
 * after finalize, packed weights should be clean file-backed pages (droppable, shared)
 * rather than private dirty memory. `available` is false where smaps does not exist
 * (not Linux, or the heap backend of mmap-native), and the byte figures are then 0.
 */
export interface CacheMemoryStats {
  readonly available: boolean;
  /** Mappings of the backing file that are open. */
  readonly mappings: number;
  readonly mappedBytes: number;
  readonly rss: number;
  readonly pss: number;
  readonly privateDirty: number;
  readonly sharedDirty: number;
  readonly privateClean: number;
  readonly sharedClean: number;
  /** privateDirty + sharedDirty. */
  readonly dirtyBytes: number;
  /** privateClean + sharedClean. */
  readonly cleanBytes: number;
  /** Packed bytes held on the JS heap instead (fallback, unnamed entries). */
  readonly heapBytes: number;
}

export function mappingsMemoryStats(
  mappings: Iterable<Mapping>,
  heapBytes: number,
): CacheMemoryStats {
  let count = 0;
  let mappedBytes = 0;
  let available = process.platform === 'linux';
  const sum = { rss: 0, pss: 0, privateDirty: 0, sharedDirty: 0, privateClean: 0, sharedClean: 0 };
  // One read of /proc/self/smaps for all mappings (it lists every mapping of the process).
  const table = readSmapsTable();
  for (const mapping of mappings) {
    if (mapping.closed) continue;
    count++;
    mappedBytes += mapping.length;
    const stats = mappingMemoryStats(mapping, table);
    if (stats === null) {
      available = false;
      continue;
    }
    sum.rss += stats.rss;
    sum.pss += stats.pss;
    sum.privateDirty += stats.privateDirty;
    sum.sharedDirty += stats.sharedDirty;
    sum.privateClean += stats.privateClean;
    sum.sharedClean += stats.sharedClean;
  }
  return {
    available: available && count > 0,
    mappings: count,
    mappedBytes,
    ...sum,
    dirtyBytes: sum.privateDirty + sum.sharedDirty,
    cleanBytes: sum.privateClean + sum.sharedClean,
    heapBytes,
  };
}
