import type { ChipCallableView } from './chip-callable.js';
import { Fnv1a64, fnv1a64 } from './fnv.js';
import { CoreCallableLayout } from './layout.js';

/** Dedup key of chip buffers: FNV-1a over the caller's unpatched bytes [0, total_size). */
export function contentHash(bytes: Uint8Array, totalSize: number = bytes.length): bigint {
  return fnv1a64(bytes.subarray(0, totalSize));
}

/**
 * FNV-1a over child_count, then per child func_id, binary_size and the kernel bytes; the
 * orch does not take part (simpler chip_callable_layout.h, compute_chip_callable_layout).
 */
export function aicoreImageHash(bytes: Uint8Array, parsed: ChipCallableView): bigint {
  const hash = new Fnv1a64().updateU32(parsed.children.length);
  for (const child of parsed.children) {
    const start = child.imageOffset + CoreCallableLayout.binaryOffset;
    hash.updateU32(child.funcId).updateU32(child.binarySize);
    hash.update(bytes.subarray(start, start + child.binarySize));
  }
  return hash.digest();
}
