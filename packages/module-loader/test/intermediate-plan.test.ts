// The plan of a method's intermediate values: values alive at the same time never share
// memory, a node's output never shares memory with its input, and a chain of layers runs
// through two buffers.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { planIntermediates } from '../src/backends/intermediate-plan.js';

describe('planIntermediates', () => {
  it('runs a chain of layers through two buffers', () => {
    // Node n writes value n, which node n + 1 reads.
    const sizes = [64, 64, 64, 64, 64, 64];
    const plan = planIntermediates(
      sizes,
      sizes.map((_, i) => i),
      sizes.map((_, i) => i + 1),
    );
    expect(plan.floats).toBe(128);
    expect(plan.offsets).toEqual([0, 64, 0, 64, 0, 64]);
  });

  it('gives a value the memory of values no longer read, when it fits', () => {
    // Values 0 (8 floats) and 1 (4) are last read by node 2, value 2 (4) by node 3. Value 3
    // (16), written by node 3, finds a 12-float gap below value 2: it goes past the end.
    const plan = planIntermediates([8, 4, 4, 16], [0, 1, 2, 3], [2, 2, 3, 3]);
    expect(plan.offsets).toEqual([0, 8, 12, 16]);
    expect(plan.floats).toBe(32);
    // Written by node 4, after value 2's last read: all 16 floats are free again.
    const later = planIntermediates([8, 4, 4, 16], [0, 1, 2, 4], [2, 2, 3, 4]);
    expect(later.offsets).toEqual([0, 8, 12, 0]);
    expect(later.floats).toBe(16);
  });

  test.prop([
    fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 5 })), {
      maxLength: 40,
    }),
  ])('values alive at once never share memory', (values) => {
    // Value i is written by node i and last read `reach` nodes later.
    const sizes = values.map(([size]) => size);
    const defs = values.map((_, i) => i);
    const lastUses = values.map(([, reach], i) => i + reach);
    const plan = planIntermediates(sizes, defs, lastUses);
    for (let a = 0; a < values.length; a++) {
      const aStart = plan.offsets[a] as number;
      const aEnd = aStart + (sizes[a] as number);
      expect(aEnd).toBeLessThanOrEqual(plan.floats);
      for (let b = a + 1; b < values.length; b++) {
        // b is written while a is still to be read (at b's node at the latest).
        if ((defs[b] as number) > (lastUses[a] as number)) continue;
        const bStart = plan.offsets[b] as number;
        const bEnd = bStart + (sizes[b] as number);
        const apart = aEnd <= bStart || bEnd <= aStart || aStart === aEnd || bStart === bEnd;
        expect(apart, `values ${a} and ${b}`).toBe(true);
      }
    }
  });
});
