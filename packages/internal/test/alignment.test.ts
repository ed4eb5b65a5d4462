import { describe, expect, it } from 'vitest';
import { alignUp, isAligned } from '../src/index.js';

describe('alignUp', () => {
  it('rounds up to power-of-two and other alignments', () => {
    expect(alignUp(0, 64)).toBe(0);
    expect(alignUp(1, 64)).toBe(64);
    expect(alignUp(64, 64)).toBe(64);
    expect(alignUp(65, 4096)).toBe(4096);
    expect(alignUp(10, 3)).toBe(12);
    expect(alignUp(2 ** 40 + 1, 4096)).toBe(2 ** 40 + 4096);
  });

  // Compared in plain code and asserted once: 10,000 expect() calls took seconds on a
  // loaded machine. The limit only catches a hang (this package keeps vitest's 5 s default).
  it('agrees with the plain formula on random values', { timeout: 120_000 }, () => {
    const mismatches: string[] = [];
    let s = 12345;
    for (let i = 0; i < 10_000; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const value = s % 2 ** 31;
      const alignment = 2 ** (s % 17);
      const expected = Math.ceil(value / alignment) * alignment;
      if (alignUp(value, alignment) !== expected)
        mismatches.push(`alignUp(${value}, ${alignment})`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('isAligned', () => {
  it('tells multiples apart', () => {
    expect(isAligned(4096, 4096)).toBe(true);
    expect(isAligned(4097, 4096)).toBe(false);
    expect(isAligned(0, 64)).toBe(true);
  });
});
