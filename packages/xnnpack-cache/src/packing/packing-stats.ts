/** Process-wide packing counters, so callers can prove a cache hit did not repack. */
export interface PackingStats {
  /** Calls of a packing function. */
  readonly calls: number;
  /** Packed bytes written by those calls. */
  readonly bytes: number;
}

let calls = 0;
let bytes = 0;

export function packingStats(): PackingStats {
  return { calls, bytes };
}

export function resetPackingStats(): void {
  calls = 0;
  bytes = 0;
}

export function recordPacking(packedBytes: number): void {
  calls++;
  bytes += packedBytes;
}
