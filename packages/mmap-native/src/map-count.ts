// Every mapping is one kernel mapping (one line of /proc/self/maps), and Linux refuses new
// ones with ENOMEM once a process has vm.max_map_count of them (65530 by default). That
// ENOMEM looks like "out of memory", so the error says how many of ours are live.
// Reaching the kernel limit is worse than an error: V8 itself then fails to mmap and Node
// aborts the process ("Fatal process out of memory"), so we stop short of it.

import { liveHeapMappings } from './backends/heap/mapping.js';
import { loadedAddon } from './backends/posix/addon.js';
import { MmapError } from './errors.js';
import { nodeFs, nodeOs } from './node-builtins.js';

/** Where Linux exposes the per-process mapping limit. */
export const MAX_MAP_COUNT_PATH = '/proc/sys/vm/max_map_count';

/** vm.max_map_count, or null where it cannot be read (not Linux). */
export function readMaxMapCount(): number | null {
  try {
    const value = Number.parseInt(nodeFs().readFileSync(MAX_MAP_COUNT_PATH, 'utf8'), 10);
    return Number.isSafeInteger(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Map slots left to the runtime (V8's heap pages, code space, thread stacks, libraries):
 * a bare Node 20 process uses about 300; the rest is margin for a growing heap.
 */
export const MAP_COUNT_HEADROOM = 2048;

let maxMapCount: number | null | undefined;

/** vm.max_map_count, read once per process (it is a system setting, not a per-call one). */
function cachedMaxMapCount(): number | null {
  if (maxMapCount === undefined) maxMapCount = readMaxMapCount();
  return maxMapCount;
}

function explanation(liveMappings: number, limit: number | null): string {
  const here = limit === null ? '' : ` (${limit} here)`;
  return (
    `${liveMappings} mappings made by @memlayer/mmap-native are live in this process. ` +
    `Each one counts toward the kernel's per-process limit vm.max_map_count${here}, and the ` +
    'address space (ulimit -v) bounds their total size: close mappings you no longer use, ' +
    'or map fewer, larger ranges.'
  );
}

/**
 * Throws MmapError 'ENOMEM' (syscall 'mmap') before a new mapping would leave fewer than
 * MAP_COUNT_HEADROOM of vm.max_map_count to the runtime. Only where the limit is known.
 */
export function checkMapBudget(
  liveMappings: number,
  path: string,
  limit: number | null = cachedMaxMapCount(),
): void {
  if (limit === null || liveMappings + 1 + MAP_COUNT_HEADROOM <= limit) return;
  const base = MmapError.fromErrno(nodeOs().constants.errno.ENOMEM, 'mmap', path);
  throw new MmapError(
    `${base.message}: refused before the kernel limit, which would abort Node. ` +
      explanation(liveMappings, limit),
    { errno: base.errno, syscall: 'mmap', path },
  );
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
  const explained = new MmapError(`${error.message}: ${explanation(liveMappings, maxMapCount)}`, {
    code: error.code,
    errno: error.errno,
    syscall: error.syscall,
    path: error.path,
  });
  explained.cause = error;
  return explained;
}

/**
 * Mappings made by this package that are not unmapped yet: posix mappings in the whole
 * process (all threads) plus heap mappings of this thread. A mapping dropped without
 * close() stays counted until the garbage collector finalizes it.
 */
export function liveMappingCount(): number {
  // The Windows build of the addon is a stub without mappings (and without the call).
  const addon = loadedAddon();
  return (addon?.supported ? addon.liveMappings() : 0) + liveHeapMappings();
}
