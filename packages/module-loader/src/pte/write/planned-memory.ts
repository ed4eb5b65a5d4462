/** exir/memory_planning.py: each planned tensor's size is rounded up to ALIGNMENT (exir/tensor.py: 16). */
export const PLANNED_TENSOR_ALIGNMENT = 16;

/**
 * Offsets for tensors that are all alive at once (the delegate call reads the inputs and
 * writes the outputs), one after another in one planned buffer: what exir/memory_planning.py
 * gives when no two lifetimes end before another starts. `total` is the buffer's size.
 */
export function planTensors(byteSizes: readonly number[]): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let total = 0;
  for (const size of byteSizes) {
    offsets.push(total);
    total += Math.ceil(size / PLANNED_TENSOR_ALIGNMENT) * PLANNED_TENSOR_ALIGNMENT;
  }
  return { offsets, total };
}
