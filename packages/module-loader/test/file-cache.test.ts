import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packingStats, resetPackingStats, XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { afterEach, describe, expect, test } from 'vitest';
import { BackendRegistry, Module, XnnpackBackend, type XnnpackHandle } from '../src/index.js';
import { cacheOptions, type MlpFixture, writeMlpProgram } from './fixtures.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'run-module.ts');

function runChild(
  programPath: string,
  cachePath: string,
): { packs: number; cacheHits: number; digest: string } {
  const result = spawnSync(
    process.execPath,
    ['--conditions=memlayer-source', '--import', 'tsx', CHILD, programPath, cachePath],
    {
      encoding: 'utf8',
      cwd: join(import.meta.dirname, '..'),
      timeout: 110_000,
    },
  );
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

let fixture: MlpFixture;
afterEach(() => fixture?.cleanup());

describe('XnnpackBackend with packed_cache_path', () => {
  test('the first process packs, a fresh process packs nothing, outputs identical', () => {
    fixture = writeMlpProgram();
    const cachePath = join(fixture.dir, 'weights.xpwc');
    const cold = runChild(fixture.manifestPath, cachePath);
    const warm = runChild(fixture.manifestPath, cachePath);
    expect(cold).toMatchObject({ packs: 3, cacheHits: 0 });
    expect(warm).toMatchObject({ packs: 0, cacheHits: 3 });
    expect(warm.digest).toBe(cold.digest);
  });

  test('unloading releases the references: refcounts back to zero, saved entries kept', () => {
    fixture = writeMlpProgram();
    const cachePath = join(fixture.dir, 'weights.xpwc');
    const manager = new XNNWeightsCacheManager();
    const registry = new BackendRegistry().register(new XnnpackBackend({ caches: manager }));
    // Another holder keeps the instance open so its entries can be looked at after unload.
    const observer = manager.acquire(cachePath);
    resetPackingStats();
    const first = new Module(fixture.manifestPath, { registry });
    first.load(cacheOptions(cachePath, true));
    first.loadMethod('forward');
    const second = new Module(fixture.manifestPath, { registry });
    second.load(cacheOptions(cachePath, true));
    second.loadMethod('forward');
    expect(packingStats().calls).toBe(3);
    const names = (first.methodHandle('forward') as XnnpackHandle).packedDataNames;
    // Named by content: kernel SHA-256 + bias SHA-256 (l1 has no bias).
    expect(names.map((name) => name.length)).toEqual([128, 64, 128]);
    for (const name of names) expect(name).toMatch(/^[0-9a-f]+$/);
    for (const name of names) expect(observer.cache.getPackedDataMeta(name)?.refCount).toBe(2);
    first.unload();
    second.unload();
    for (const name of names) {
      const meta = observer.cache.getPackedDataMeta(name);
      expect(meta?.refCount).toBe(0);
      expect(meta?.fromLoad).toBe(true);
    }
    // A reload hits the kept entries instead of packing again.
    const third = new Module(fixture.manifestPath, { registry });
    third.load(cacheOptions(cachePath, true));
    third.loadMethod('forward');
    expect(packingStats().calls).toBe(3);
    expect((third.methodHandle('forward') as XnnpackHandle).cacheHits).toBe(3);
    third.dispose();
    observer.release();
  });
});
