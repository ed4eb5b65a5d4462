import { expect } from 'vitest';

/**
 * f32 results of different summation orders agree to a few ulps of the largest magnitude:
 * each element within 1e-5 of max(1, max |expected|).
 */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  expect(actual.length).toBe(expected.length);
  const scale = Math.max(1, ...Array.from(expected, Math.abs));
  for (let i = 0; i < expected.length; i++) {
    expect(Math.abs((actual[i] as number) - (expected[i] as number))).toBeLessThan(1e-5 * scale);
  }
}
