// The bound of a JavaScript warm start: it must do a warm start's unavoidable work and fail
// loudly rather than measure less (no plan, or an entry missing from the cache).
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { methodPlansPath } from '@memlayer/module-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { measureFloor } from '../src/floor.js';
import { writeModel } from '../src/model.js';
import { measureWarmBound } from '../src/warm-bound.js';
import { coldStart } from './cold-start.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-bound-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('measureWarmBound', () => {
  const spec = { label: 'small', layers: 12, dim: 16 };
  const program = writeModel(join(dir, 'model'), spec);

  it('finds every layer of the plan in the cache file, as a warm start does', () => {
    const cachePath = join(dir, 'hit.xpwc');
    coldStart(program, cachePath);
    const bound = measureWarmBound(program, cachePath, 'forward');
    expect(bound.layers).toBe(spec.layers);
    expect(bound.boundMs).toBeGreaterThan(0);
    expect(measureFloor(cachePath).entries).toBe(spec.layers);
  });

  it('fails without the method plan, or with a plans file that changed on disk', () => {
    const cachePath = join(dir, 'no-plan.xpwc');
    coldStart(program, cachePath);
    const plans = methodPlansPath(cachePath);
    const text = readFileSync(plans, 'utf8');
    writeFileSync(plans, `${text} `);
    expect(() => measureWarmBound(program, cachePath, 'forward')).toThrow(/check digest/);
    rmSync(plans);
    expect(() => measureWarmBound(program, cachePath, 'forward')).toThrow(/ENOENT/);
  });

  it('fails when the cache file lacks a planned entry', () => {
    const cachePath = join(dir, 'other.xpwc');
    coldStart(program, cachePath);
    // The plan of this model beside the cache of a model with other weights.
    const otherProgram = writeModel(join(dir, 'other'), { label: 'other', layers: 12, dim: 8 });
    const otherCache = join(dir, 'other.xpwc.data');
    coldStart(otherProgram, otherCache);
    rmSync(cachePath);
    renameSync(otherCache, cachePath);
    expect(() => measureWarmBound(program, cachePath, 'forward')).toThrow(/no cache entry/);
  });
});
