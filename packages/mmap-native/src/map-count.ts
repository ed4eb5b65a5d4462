// Every mapping is one kernel mapping (one line of /proc/self/maps), and Linux refuses new
// ones with ENOMEM once a process has vm.max_map_count of them (65530 by default). That
// ENOMEM looks like "out of memory", so the error says how many of ours are live.
import { readFileSync } from 'node:fs';
import { liveHeapMappings } from './backends/heap/mapping.js';
import { loadedAddon } from './backends/posix/addon.js';
import { MmapError } from './errors.js';

/** Where Linux exposes the per-process mapping limit. */
export const MAX_MAP_COUNT_PATH = '/proc/sys/vm/max_map_count';

/** vm.max_map_count, or null where it cannot be read (not Linux). */
export function readMaxMapCount(): number | null {
  try {
    const value = Number.parseInt(readFileSync(MAX_MAP_COUNT_PATH, 'utf8'), 10);
    return Number.isSafeInteger(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * An mmap ENOMEM rewritten to say how many mappings are live and to name
 * vm.max_map_count; any other error is returned unchanged.
 */
export function explainMapFailure(
  error: unknown,
  liveMappings: number,
  maxMapCount: number | null = readMaxMapCount(),
): unknown {
  if (!(error instanceof MmapError) || error.code !== 'ENOMEM') return error;
  const limit = maxMapCount === null ? '' : ` (${maxMapCount} here)`;
  const explained = new MmapError(
    `${error.message}: ${liveMappings} mappings made by @memlayer/mmap-native are live in ` +
      `this process. Each one counts toward the kernel's per-process limit ` +
      `vm.max_map_count${limit}, and the address space (ulimit -v) bounds their total ` +
      'size: close mappings you no longer use, or map fewer, larger ranges.',
    { code: error.code, errno: error.errno, syscall: error.syscall, path: error.path },
  );
  explained.cause = error;
  return explained;
}

/**
 * Mappings made by this package that are not unmapped yet: posix mappings in the whole
 * process (all threads) plus heap mappings of this thread. A mapping dropped without
 * close() stays counted until the garbage collector finalizes it.
 */
export function liveMappingCount(): number {
  return (loadedAddon()?.liveMappings() ?? 0) + liveHeapMappings();
}
