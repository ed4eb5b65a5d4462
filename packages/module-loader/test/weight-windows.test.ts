// How tensors are grouped into the windows weights are mapped in (planWindows).
import { NO_GC_WINDOW_BYTES as WINDOW_BYTES } from '@memlayer/mmap-native';
import { describe, expect, it } from 'vitest';
import type { SafetensorsTensorInfo } from '../src/safetensors/header.js';
import { MAX_WINDOW_BYTES, planWindows } from '../src/safetensors/windows.js';

const MiB = 1024 * 1024;

/** Tensors laid end to end from offset 4096, of the given sizes in bytes. */
function tensors(sizes: number[]): SafetensorsTensorInfo[] {
  let at = 4096;
  return sizes.map((byteLength, i) => {
    const info = {
      name: `t${i}`,
      dtype: 'F32' as const,
      shape: [byteLength / 4],
      fileOffset: at,
      byteLength,
    };
    at += byteLength;
    return info;
  });
}

const windowsOf = (sizes: number[]) => {
  const list = tensors(sizes);
  const { windows, windowOf } = planWindows(list);
  return { windows, of: list.map((t) => windowOf.get(t.name)) };
};

describe('weight windows', () => {
  it('small tensors share windows of at most 32 MiB (each mapping stays uncounted by V8)', () => {
    expect(WINDOW_BYTES).toBe(32 * MiB);
    const { windows, of } = windowsOf(new Array(10).fill(4 * MiB));
    expect(of).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    for (const window of windows) expect(window.length).toBeLessThanOrEqual(WINDOW_BYTES);
  });

  it('a window that starts with a tensor over 32 MiB spans up to 1 GiB', () => {
    const { windows, of } = windowsOf([4 * MiB, 40 * MiB, 4 * MiB, 4 * MiB, 600 * MiB, 400 * MiB]);
    // t1 does not fit t0's small window; it starts a large one that takes t2..t4; t5 would
    // take that window past 1 GiB and starts its own.
    expect(of).toEqual([0, 1, 1, 1, 1, 2]);
    expect(windows[1]?.length).toBe((40 + 4 + 4 + 600) * MiB);
    for (const window of windows) expect(window.length).toBeLessThanOrEqual(MAX_WINDOW_BYTES);
  });

  it('a tensor over 1 GiB gets a window of its own; empty tensors get none', () => {
    const { windows, of } = windowsOf([0, 2 * 1024 * MiB, 4 * MiB]);
    expect(of).toEqual([undefined, 0, 1]);
    expect(windows[0]?.length).toBe(2 * 1024 * MiB);
  });
});
