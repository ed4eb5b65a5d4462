// A method whose build fails half-way leaves the shared cache as it was: no references, no
// reservations or entries of its own, and a later build of the same method packs afresh.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNamedDataMap, XNNWeightsCache } from '@memlayer/xnnpack-cache';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  BackendRegistry,
  LoadBackendOptionsMap,
  Module,
  type WeightsCacheSource,
  XnnpackBackend,
} from '../src/index.js';
import { writeLinearProgram } from './weights-programs.js';

/** A heap cache whose `failAt`-th reservation (1-based) fails, as a full disk or heap would. */
class FailingReserveCache extends XNNWeightsCache {
  reservations = 0;
  failAt = 0;
  override reserveSpace(n: number): Uint8Array | null {
    this.reservations++;
    return this.reservations === this.failAt ? null : super.reserveSpace(n);
  }
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'failed-build-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a build that fails at its second layer takes no references and commits nothing', () => {
  const program = writeLinearProgram(dir, [
    { weight: 'a.weight', bias: 'a.bias', out: 16, in: 8, seed: 1 },
    { weight: 'b.weight', out: 8, in: 16, seed: 3 },
    { weight: 'c.weight', out: 4, in: 8, seed: 5 },
  ]);
  const cachePath = join(dir, 'cache.xpwc');
  // Commits at finalize, so anything the failed build finalized would be in the file now.
  const cache = new FailingReserveCache({ path: cachePath, commit: 'finalize' });
  cache.failAt = 2;
  const caches: WeightsCacheSource = {
    acquire: () => ({ cache, release: () => {} }),
    saveAll: () => undefined,
  };
  const registry = new BackendRegistry().register(new XnnpackBackend({ caches }));
  const module = new Module(program, { registry });
  module.load(new LoadBackendOptionsMap());
  expect(() => module.loadMethod('forward')).toThrow(
    expect.objectContaining({
      code: 'ERR_BACKEND_INIT_FAILED',
      cause: expect.objectContaining({ code: 'ERR_CACHE_OUT_OF_MEMORY' }),
    }),
  );
  // The first layer's pack was this build's alone: it is gone, and nothing is pending.
  expect(cache.getPackedDataNames()).toEqual([]);
  expect(cache.stats().packedBytes).toBe(0);
  expect(cache.isFinalized()).toBe(true);
  // Another process opening the file finds no entry of the failed build.
  const reader = new XNNWeightsCache({ path: cachePath });
  reader.initializeForRuntime(new InMemoryNamedDataMap());
  expect(reader.getPackedDataNames()).toEqual([]);
  reader.close();

  cache.failAt = 0;
  cache.reservations = 0;
  module.loadMethod('forward');
  expect(cache.reservations).toBe(3); // every layer packed again, none served stale
  const names = cache.getPackedDataNames();
  expect(names).toHaveLength(3);
  for (const name of names) expect(cache.getPackedDataMeta(name)?.refCount).toBe(1);
  module.dispose();
  // Committed entries stay (they are the file's), with no reference left.
  for (const name of names) expect(cache.getPackedDataMeta(name)?.refCount ?? 0).toBe(0);
  cache.close();
});
