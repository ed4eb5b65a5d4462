// Heap allocated by a warm start and by the floor: measured in fresh children started with
// the allocation flags, as the bench runs them, so a collection cannot hide bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AllocationResult } from '../src/allocations.js';
// Children run the built child script (the test task depends on the build).
import { runInChild } from '../src/children.js';
import { writeModel } from '../src/model.js';
import { coldStart } from './cold-start.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-allocations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function measure(what: 'warm' | 'floor', program: string, cachePath: string) {
  return runInChild<AllocationResult>({
    kind: 'allocations',
    what,
    program,
    cachePath,
    method: 'forward',
  });
}

/**
 * measure() until a child ran without a collection, at most three times: V8 may still run
 * one for its own reasons (its memory reducer, on a loaded machine), which the bench too
 * reports as no figure. A child setup that lets the start collect fails all three.
 */
async function measureWithoutCollection(
  what: 'warm' | 'floor',
  program: string,
  cachePath: string,
): Promise<AllocationResult> {
  let result = await measure(what, program, cachePath);
  for (let attempt = 1; attempt < 3 && result.collections !== 0; attempt++) {
    result = await measure(what, program, cachePath);
  }
  return result;
}

describe('allocation children', () => {
  it('count a warm start of every layer and the floor of its file, with no collection', async () => {
    const small = { label: 'small', layers: 16, dim: 16 };
    const large = { label: 'large', layers: 256, dim: 16 };
    const results: Record<string, { warm: AllocationResult; floor: AllocationResult }> = {};
    for (const spec of [small, large]) {
      const program = writeModel(join(dir, spec.label), spec);
      const cachePath = join(dir, `${spec.label}.xpwc`);
      coldStart(program, cachePath);
      const warm = await measureWithoutCollection('warm', program, cachePath);
      const floor = await measureWithoutCollection('floor', program, cachePath);
      expect(warm).toMatchObject({ kind: 'warm', entries: spec.layers, collections: 0 });
      expect(floor).toMatchObject({ kind: 'floor', entries: spec.layers, collections: 0 });
      expect(warm.programLoadBytes).toBeGreaterThan(0);
      expect(warm.methodLoadBytes).toBeGreaterThan(0);
      expect(floor.methodLoadBytes).toBeGreaterThan(0);
      results[spec.label] = { warm, floor };
    }
    // More layers allocate more: the figures follow the model, they are not a fixed cost.
    const { small: s, large: l } = results as Record<
      'small' | 'large',
      { warm: AllocationResult; floor: AllocationResult }
    >;
    expect(l.warm.methodLoadBytes).toBeGreaterThan(s.warm.methodLoadBytes);
    expect(l.floor.methodLoadBytes).toBeGreaterThan(s.floor.methodLoadBytes);
  });

  it('fail when the cache file is missing rather than measure nothing', async () => {
    const program = writeModel(join(dir, 'missing'), { label: 'missing', layers: 2, dim: 8 });
    await expect(measure('floor', program, join(dir, 'absent.xpwc'))).rejects.toThrow(/ENOENT/);
  });
});
