import { mmapNative } from '#deferred/mmap-native';
import type { SafetensorsTensorInfo } from './header.js';

/**
 * Weights are mapped in windows of at most this many bytes, never the whole file: Node 20
 * cannot hold a buffer over 4 GiB (a 5 GB shard is common), and a full cache hit maps none.
 * A window grows this far only from a tensor larger than mmap-native's NO_GC_WINDOW_BYTES (its mapping starts
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
 * Groups tensors, in file order, into windows of at most mmap-native's NO_GC_WINDOW_BYTES
 * (a mapping that size starts no garbage collection), or MAX_WINDOW_BYTES when the window's
 * first tensor is larger; a tensor larger than
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
  const windowBytes = mmapNative().NO_GC_WINDOW_BYTES;
  let limit = windowBytes;
  for (const tensor of sorted) {
    const tensorEnd = tensor.fileOffset + tensor.byteLength;
    if (start < 0 || tensorEnd - start > limit) {
      if (start >= 0) windows.push({ start, length: end - start });
      start = tensor.fileOffset - (tensor.fileOffset % WINDOW_ALIGNMENT);
      limit = tensor.byteLength > windowBytes ? MAX_WINDOW_BYTES : windowBytes;
    }
    end = tensorEnd;
    windowOf.set(tensor.name, windows.length);
  }
  if (start >= 0) windows.push({ start, length: end - start });
  return { windows, windowOf };
}
