/**
 * Where a method's intermediate values live in its workspace: each value takes memory
 * when its node runs and gives it back after the last node that reads it, so a chain of
 * layers runs through two buffers that stay in cache instead of a new stretch of memory per
 * layer (at batch 64, a forward of 1024 layers of 128 wrote 32 MiB; planned, 64 KiB).
 * XNNPACK plans its workspace by the same lifetimes (92a7ad50 src/memory-planner.c).
 */
export interface IntermediatePlan {
  /** Offset of each value in the workspace, in floats. */
  readonly offsets: readonly number[];
  /** Floats the workspace must hold. */
  readonly floats: number;
}

/**
 * Plans values `i` of `sizes[i]` floats, written by node `defs[i]` and last read by node
 * `lastUses[i]` (>= defs[i]), listed in the order of their defs. Walking the nodes in order,
 * a value takes the first free gap it fits in, else memory past the end; the values no node
 * from `defs[i]` on reads are freed first. A node's input is read by that node, so it is
 * still live when the node's output is placed: the two never share memory.
 */
export function planIntermediates(
  sizes: readonly number[],
  defs: readonly number[],
  lastUses: readonly number[],
): IntermediatePlan {
  const offsets: number[] = [];
  const free = new FreeList();
  let live: number[] = [];
  for (let i = 0; i < sizes.length; i++) {
    const node = defs[i] as number;
    const still: number[] = [];
    for (const value of live) {
      if ((lastUses[value] as number) < node)
        free.give(offsets[value] as number, sizes[value] as number);
      else still.push(value);
    }
    live = still;
    offsets.push(free.take(sizes[i] as number));
    live.push(i);
  }
  return { offsets, floats: free.end };
}

/** Free gaps [start, end) below `end`, sorted, apart from each other. */
class FreeList {
  readonly #gaps: [number, number][] = [];
  end = 0;

  take(size: number): number {
    const gaps = this.#gaps;
    for (let g = 0; g < gaps.length; g++) {
      const [start, end] = gaps[g] as [number, number];
      if (end - start < size) continue;
      if (end - start === size) gaps.splice(g, 1);
      else gaps[g] = [start + size, end];
      return start;
    }
    // No gap fits: grow past the end, from inside the last gap when it reaches the end.
    const last = gaps[gaps.length - 1];
    if (last !== undefined && last[1] === this.end) {
      gaps.pop();
      this.end = last[0] + size;
      return last[0];
    }
    const at = this.end;
    this.end += size;
    return at;
  }

  give(start: number, size: number): void {
    if (size === 0) return;
    const gaps = this.#gaps;
    let end = start + size;
    let g = 0;
    while (g < gaps.length && (gaps[g] as [number, number])[1] < start) g++;
    // Merges with the gap that ends where this starts and the one that starts where it ends.
    while (g < gaps.length && (gaps[g] as [number, number])[0] <= end) {
      const [gapStart, gapEnd] = gaps[g] as [number, number];
      start = Math.min(start, gapStart);
      end = Math.max(end, gapEnd);
      gaps.splice(g, 1);
    }
    gaps.splice(g, 0, [start, end]);
  }
}
