import { NO_GC_WINDOW_BYTES } from '@memlayer/mmap-native';
import type { SafetensorsTensorInfo } from './header.js';

/** Span of a window of tensors up to this size: mmap-native's, which starts no garbage collection. */
export const WINDOW_BYTES = NO_GC_WINDOW_BYTES;
/**
 * Weights are mapped in windows of at most this many bytes, never the whole file: Node 20
 * cannot hold a buffer over 4 GiB (a 5 GB shard is common), and a full cache hit maps none.
 * A window grows this far only from a tensor larger than WINDOW_BYTES (its mapping starts
 * a collection whatever its size, so large tensors share a few).
 */
export const MAX_WINDOW_BYTES = 1024 * 1024 * 1024;
/** Window starts are rounded down to this, so a tensor keeps its file alignment inside. */
const WINDOW_ALIGNMENT = 4096;

export interface WindowPlan {
  /** File offset of the window's first byte. */
  readonly start: number;
  readonly length: number;
}

/**
 * Groups tensors, in file order, into windows of at most WINDOW_BYTES, or MAX_WINDOW_BYTES
 * when the window's first tensor is larger than WINDOW_BYTES; a tensor larger than
 * MAX_WINDOW_BYTES gets a window of its own. No tensor crosses a window. Empty tensors get
 * none (-1).
 */
export function planWindows(tensors: readonly SafetensorsTensorInfo[]): {
  windows: WindowPlan[];
  windowOf: Map<string, number>;
} {
  const sorted = tensors
    .filter((t) => t.byteLength > 0)
    .sort((a, b) => a.fileOffset - b.fileOffset);
  const windows: WindowPlan[] = [];
  const windowOf = new Map<string, number>();
  let start = -1;
  let end = -1;
  let limit = WINDOW_BYTES;
  for (const tensor of sorted) {
    const tensorEnd = tensor.fileOffset + tensor.byteLength;
    if (start < 0 || tensorEnd - start > limit) {
      if (start >= 0) windows.push({ start, length: end - start });
      start = tensor.fileOffset - (tensor.fileOffset % WINDOW_ALIGNMENT);
      limit = tensor.byteLength > WINDOW_BYTES ? MAX_WINDOW_BYTES : WINDOW_BYTES;
    }
    end = tensorEnd;
    windowOf.set(tensor.name, windows.length);
  }
  if (start >= 0) windows.push({ start, length: end - start });
  return { windows, windowOf };
}
