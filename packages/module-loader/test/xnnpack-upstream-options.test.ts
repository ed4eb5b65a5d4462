import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XNNWeightsCache } from '@memlayer/xnnpack-cache';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  BackendRegistry,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  ModuleLoaderError,
  type WeightsCacheSource,
  XnnpackBackend,
  type XnnpackHandle,
} from '../src/index.js';
import { cacheOptions } from './fixtures.js';
import { heapOnlyOutput, programInput, sha256, writeLinearProgram } from './weights-programs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-options-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof ModuleLoaderError ? error.code : String(error);
  }
  return undefined;
}

/** A heap cache source that counts saveAll calls (and can fail them). */
function countingSource(failWith?: Error): WeightsCacheSource & { saves: number } {
  const cache = new XNNWeightsCache();
  return {
    saves: 0,
    acquire: () => ({ cache, release: () => {} }),
    saveAll() {
      this.saves++;
      return failWith;
    },
  };
}

const twoLayers = () =>
  writeLinearProgram(join(dir, 'p'), [
    { weight: 'w0', bias: 'b0', out: 12, in: 8, seed: 1 },
    { weight: 'w1', out: 4, in: 12, seed: 2 },
  ]);

function run(module: Module): string {
  const [output] = module.execute('forward', [programInput(module.programManifest())]);
  return sha256(output?.data as Float32Array);
}

describe('XnnpackBackend options as upstream', () => {
  test('defaults: weight cache on, workspace sharing Global (2)', () => {
    const backend = new XnnpackBackend();
    expect(backend.getOption('weight_cache_enabled')).toBe(true);
    expect(backend.getOption('workspace_sharing_mode')).toBe(2);
    expect(backend.getOption('packed_cache_path')).toBe('');
  });

  test('setOption(packed_cache_path) is kept but routes no init: a model loaded without a path stays off that file', () => {
    const program = twoLayers();
    const cachePath = join(dir, 'global.xpwc');
    const backend = new XnnpackBackend();
    backend.setOption('packed_cache_path', cachePath);
    expect(backend.getOption('packed_cache_path')).toBe(cachePath);
    const registry = new BackendRegistry().register(backend);
    const unopted = new Module(program, { registry });
    unopted.load();
    unopted.loadMethod('forward');
    backend.setOption('save_weight_cache_on_disk', true);
    // As upstream (XNNPACKBackend.cpp init reads the path from the runtime spec only).
    expect(existsSync(cachePath)).toBe(false);
    unopted.dispose();
    // A model whose own options name the path uses it; nothing is written beside it.
    const opted = new Module(program, { registry });
    opted.load(cacheOptions(cachePath, true));
    opted.loadMethod('forward');
    expect(readdirSync(dir).filter((name) => name.startsWith('global.xpwc'))).toEqual([
      'global.xpwc',
    ]);
    opted.dispose();
  });

  test('save_weight_cache_on_disk = true saves once, now, and is never stored', () => {
    const caches = countingSource();
    const backend = new XnnpackBackend({ caches });
    backend.setOption('save_weight_cache_on_disk', true);
    expect(caches.saves).toBe(1);
    backend.setOption('save_weight_cache_on_disk', false);
    expect(caches.saves).toBe(1);
    expect(backend.getOption('save_weight_cache_on_disk')).toBeUndefined();
    // Later inits do not save again unless their own specs ask for it (once each).
    const module = new Module(twoLayers(), { registry: new BackendRegistry().register(backend) });
    module.load();
    module.loadMethod('forward');
    expect(caches.saves).toBe(1);
    module.loadMethod('forward', {
      options: new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('save_weight_cache_on_disk', true),
      ),
    });
    expect(caches.saves).toBe(1); // already loaded: no-op
    module.unloadMethod('forward');
    module.loadMethod('forward', {
      options: new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('save_weight_cache_on_disk', true),
      ),
    });
    expect(caches.saves).toBe(2);
    module.dispose();
  });

  test('a failing save is ERR_WEIGHTS_CACHE_SAVE_FAILED with the cause', () => {
    const backend = new XnnpackBackend({ caches: countingSource(new Error('disk full')) });
    expect(codeOf(() => backend.setOption('save_weight_cache_on_disk', true))).toBe(
      'ERR_WEIGHTS_CACHE_SAVE_FAILED',
    );
  });

  test('xnnpack_revision picks the seeds of a named XNNPACK revision; others are refused', () => {
    const backend = new XnnpackBackend();
    expect(codeOf(() => backend.setOption('xnnpack_revision', 'main'))).toBe(
      'ERR_OPTION_INVALID_VALUE',
    );
    const module = new Module(twoLayers(), { registry: new BackendRegistry().register(backend) });
    module.load();
    const seeds = (revision: string) => {
      module.unloadMethod('forward');
      module.loadMethod('forward', {
        options: new LoadBackendOptionsMap().setOptions(
          'XnnpackBackend',
          new BackendOptions()
            .setOption('xnnpack_revision', revision)
            .setOption('weight_cache_enabled', false),
        ),
      });
      const handle = module.methodHandle('forward') as XnnpackHandle;
      return [...handle.operators.values()].map((operator) => operator.seed);
    };
    const newest = seeds('92a7ad50');
    const older = seeds('1adaa7c7');
    // fully_connected_nc_f32 is operator type 63 at 92a7ad50 and 59 at 1adaa7c7.
    expect(newest.map((seed, i) => (seed ^ (older[i] as number)) >>> 0)).toEqual([
      63 ^ 59,
      63 ^ 59,
    ]);
    module.dispose();
  });
});

describe('workspace_sharing_mode: a real workspace for intermediate values', () => {
  test.each([
    [0, 'one per method'],
    [1, 'one per program'],
    [2, 'one per backend'],
  ])('mode %i (%s): outputs as the heap-only run, sharing as the mode says', (mode) => {
    const program = twoLayers();
    const other = writeLinearProgram(join(dir, 'q'), [{ weight: 'w', out: 4, in: 8, seed: 9 }]);
    const registry = new BackendRegistry().register(new XnnpackBackend());
    const options = new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions().setOption('workspace_sharing_mode', mode),
    );
    const manifest = JSON.parse(readFileSync(program, 'utf8'));
    manifest.methods.second = manifest.methods.forward;
    writeFileSync(program, JSON.stringify(manifest));
    const a = new Module(program, { registry });
    const b = new Module(other, { registry });
    a.load(options);
    b.load(options);
    expect(run(a)).toBe(heapOnlyOutput(program));
    expect(run(b)).toBe(heapOnlyOutput(other));
    a.execute('second', [programInput(a.programManifest())]);
    const workspace = (m: Module, name = 'forward') =>
      (m.methodHandle(name) as XnnpackHandle).workspace;
    expect(workspace(a).byteLength).toBeGreaterThan(0);
    expect(workspace(a) === workspace(a, 'second')).toBe(mode >= 1);
    expect(workspace(a) === workspace(b)).toBe(mode === 2);
    // Running again through the shared scratch gives the same bits.
    expect(run(a)).toBe(heapOnlyOutput(program));
    a.dispose();
    b.dispose();
  });
});

describe('createDefaultRegistry', () => {
  test('backends are created on first use; the default cache source honours packed_cache_path', () => {
    const registry = createDefaultRegistry();
    expect(registry.has('AscendSimBackend')).toBe(true);
    expect(registry.isCreated('AscendSimBackend')).toBe(false);
    expect(registry.isCreated('XnnpackBackend')).toBe(false);
    const cachePath = join(dir, 'default.xpwc');
    const module = new Module(twoLayers(), { registry });
    module.load(
      new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', cachePath),
      ),
    );
    run(module);
    expect(registry.isCreated('XnnpackBackend')).toBe(true);
    expect(registry.isCreated('AscendSimBackend')).toBe(false);
    expect(existsSync(cachePath)).toBe(true);
    module.dispose();
  });
});

describe('linear output_min / output_max', () => {
  test('clamp the layer outputs; min above max is ERR_MANIFEST_INVALID', () => {
    const program = writeLinearProgram(join(dir, 'c'), [{ weight: 'w', out: 16, in: 8, seed: 4 }]);
    const manifest = JSON.parse(readFileSync(program, 'utf8'));
    Object.assign(manifest.methods.forward.graph[0], { output_min: -0.25, output_max: 0.5 });
    writeFileSync(program, JSON.stringify(manifest));
    const module = new Module(program, { registry: createDefaultRegistry() });
    module.load();
    const [output] = module.execute('forward', [programInput(module.programManifest())]);
    const values = [...(output?.data ?? [])];
    expect(Math.min(...values)).toBe(-0.25);
    expect(Math.max(...values)).toBe(0.5);
    module.dispose();

    Object.assign(manifest.methods.forward.graph[0], { output_min: 1, output_max: 0 });
    writeFileSync(program, JSON.stringify(manifest));
    expect(codeOf(() => new Module(program, { registry: createDefaultRegistry() }).load())).toBe(
      'ERR_MANIFEST_INVALID',
    );
    Object.assign(manifest.methods.forward.graph[0], { output_min: '0' });
    writeFileSync(program, JSON.stringify(manifest));
    expect(codeOf(() => new Module(program, { registry: createDefaultRegistry() }).load())).toBe(
      'ERR_MANIFEST_INVALID',
    );
  });
});

describe('packed_cache_max_mib: the disk budget of the cache file', () => {
  const bigLayers = () =>
    writeLinearProgram(join(dir, 'big'), [
      { weight: 'w0', bias: 'b0', out: 512, in: 512, seed: 1 },
      { weight: 'w1', bias: 'b1', out: 512, in: 512, seed: 2 },
      { weight: 'w2', bias: 'b2', out: 512, in: 512, seed: 3 },
    ]);
  const withBudget = (cachePath: string, mib: number) =>
    new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions()
        .setOption('packed_cache_path', cachePath)
        .setOption('packed_cache_max_mib', mib),
    );

  test('entries past the budget stay on the heap, counted; outputs are unchanged', () => {
    const program = bigLayers();
    const cachePath = join(dir, 'budget.xpwc');
    const module = new Module(program, { registry: createDefaultRegistry() });
    module.load(withBudget(cachePath, 2)); // each layer packs ~1 MiB: two do not fit in 2 MiB
    module.loadMethod('forward');
    const handle = module.methodHandle('forward') as XnnpackHandle;
    const stats = handle.cache.stats();
    expect(stats.maxFileBytes).toBe(2 * 1024 * 1024);
    expect(stats.fallback?.['over-budget']?.count).toBeGreaterThan(0);
    expect(run(module)).toBe(heapOnlyOutput(program));
    module.dispose();
  });

  test('0 asks for none; a wrong type or a negative budget is refused', () => {
    const backend = new XnnpackBackend();
    expect(backend.getOption('packed_cache_max_mib')).toBe(0);
    backend.setOption('packed_cache_max_mib', 64);
    expect(backend.getOption('packed_cache_max_mib')).toBe(64);
    expect(codeOf(() => backend.setOption('packed_cache_max_mib', '64'))).toBe(
      'ERR_OPTION_WRONG_TYPE',
    );
    expect(codeOf(() => backend.setOption('packed_cache_max_mib', -1))).toBe(
      'ERR_OPTION_INVALID_VALUE',
    );
  });

  test('two inits asking one open file for other budgets: the second is refused', () => {
    const program = twoLayers();
    const cachePath = join(dir, 'conflict.xpwc');
    const registry = createDefaultRegistry();
    const first = new Module(program, { registry });
    first.load(withBudget(cachePath, 8));
    first.loadMethod('forward');
    const second = new Module(program, { registry });
    second.load(withBudget(cachePath, 16));
    let error: unknown;
    try {
      second.loadMethod('forward');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModuleLoaderError);
    expect((error as ModuleLoaderError).code).toBe('ERR_BACKEND_INIT_FAILED');
    expect(((error as Error).cause as { code?: string }).code).toBe('ERR_CACHE_BUDGET_CONFLICT');
    first.dispose();
    second.dispose();
  });
});
