import { readFileSync } from 'node:fs';

/** Monotonic milliseconds. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function minOf(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

/** Fields of /proc/<pid>/smaps_rollup in bytes (Rss, Pss, Private_Dirty, ...); {} off Linux. */
export function smapsRollup(pid: number | 'self' = 'self'): Record<string, number> {
  const out: Record<string, number> = {};
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match) out[match[1] as string] = Number(match[2]) * 1024;
  }
  return out;
}

/** Peak resident set of this process so far (VmHWM of /proc/self/status) in bytes; 0 off Linux. */
export function peakRssBytes(): number {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** A fixed pseudo-random f32 sequence (LCG), scaled so chained layers keep unit variance. */
export function fillWeights(out: Float32Array, seed: number, scale: number): Float32Array {
  let s = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 0x1_0000_0000 - 0.5) * scale;
  }
  return out;
}

export const MiB = 1024 * 1024;
