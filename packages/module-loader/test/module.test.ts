import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  type Backend,
  type BackendOption,
  BackendOptions,
  BackendRegistry,
  LoadBackendOptionsMap,
  Module,
  ModuleLoaderError,
  type OperatorProgress,
  XnnpackBackend,
  type XnnpackHandle,
} from '../src/index.js';
import { floats, type MlpFixture, referenceForward, writeMlpProgram } from './fixtures.js';

/** A backend that runs nothing and records the runtime specs each init received. */
class RecordingBackend implements Backend<{ specs: BackendOption[] }> {
  readonly id = 'XnnpackBackend';
  readonly inits: BackendOption[][] = [];
  destroyed = 0;
  init(_context: unknown, _compileSpecs: unknown, runtimeSpecs: readonly BackendOption[]) {
    const specs = runtimeSpecs.map((option) => ({ ...option }));
    this.inits.push(specs);
    return { specs };
  }
  execute() {
    return [];
  }
  destroy() {
    this.destroyed++;
  }
  setOption() {}
  getOption() {
    return undefined;
  }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return (error as ModuleLoaderError).code;
  }
  return undefined;
}

let fixture: MlpFixture;
afterEach(() => fixture?.cleanup());

function optionsWithPath(path: string): { map: LoadBackendOptionsMap; builder: BackendOptions } {
  const builder = new BackendOptions().setOption('packed_cache_path', path);
  return { map: new LoadBackendOptionsMap().setOptions('XnnpackBackend', builder), builder };
}

describe('Module with XnnpackBackend', () => {
  test('runs the program and matches a plain reference', () => {
    fixture = writeMlpProgram();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(new XnnpackBackend()),
    });
    module.load();
    const rows = 5;
    const input = floats(rows * 16, 99);
    const [output] = module.execute('forward', [{ shape: [rows, 16], data: input }]);
    expect(output?.shape).toEqual([rows, 8]);
    const expected = referenceForward(fixture, input, rows);
    for (const [i, value] of (output?.data ?? []).entries()) {
      expect(value).toBeCloseTo(expected[i] as number, 4);
    }
    module.dispose();
  });

  test('a second Module on the same cache packs nothing; unload releases every reference', () => {
    fixture = writeMlpProgram();
    const backend = new XnnpackBackend();
    const registry = new BackendRegistry().register(backend);
    const first = new Module(fixture.manifestPath, { registry });
    first.load();
    first.loadMethod('forward');
    const second = new Module(fixture.manifestPath, { registry });
    second.load();
    second.loadMethod('forward');
    const input = { shape: [2, 16] as [number, number], data: floats(32, 3) };
    expect(second.execute('forward', [input])[0]?.data).toEqual(
      first.execute('forward', [input])[0]?.data,
    );
    const handle = second.methodHandle('forward') as XnnpackHandle;
    expect(handle.cacheHits).toBe(3);
    // Entries are named by content: kernel digest + bias digest.
    const name = handle.packedDataNames[0] as string;
    expect(name).toMatch(/^[0-9a-f]{128}$/);
    expect(handle.cache.getPackedDataMeta(name)?.refCount).toBe(2);
    first.unload();
    expect(handle.cache.getPackedDataMeta(name)?.refCount).toBe(1);
    second.unload();
    expect(handle.cache.getPackedDataMeta(name)).toBeUndefined();
  });

  test('reports each operator it creates, with weight bytes so far and in total', () => {
    fixture = writeMlpProgram();
    const events: OperatorProgress[] = [];
    const backend = new XnnpackBackend({ onOperatorCreated: (event) => events.push(event) });
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(backend),
    });
    module.load();
    module.loadMethod('forward');
    const total = fixture.layers.reduce((sum, layer) => sum + layer.weight.byteLength, 0);
    expect(events.map((event) => event.operators)).toEqual([1, 2, 3]);
    expect(
      events.every((event) => event.totalOperators === 3 && event.totalWeightBytes === total),
    ).toBe(true);
    expect(events.at(-1)?.weightBytes).toBe(total);
    module.dispose();
  });

  test('inputs of the wrong shape are rejected with ERR_INVALID_INPUT', () => {
    fixture = writeMlpProgram();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(new XnnpackBackend()),
    });
    module.load();
    expect(
      codeOf(() => module.execute('forward', [{ shape: [1, 15], data: new Float32Array(15) }])),
    ).toBe('ERR_INVALID_INPUT');
    expect(codeOf(() => module.execute('forward', []))).toBe('ERR_INVALID_INPUT');
    module.dispose();
  });

  test('a wrongly typed option is an error at loadMethod and loads nothing', () => {
    fixture = writeMlpProgram();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(new XnnpackBackend()),
    });
    module.load(
      new LoadBackendOptionsMap().setOptions('XnnpackBackend', [
        { key: 'weight_cache_enabled', value: 1 },
      ]),
    );
    expect(codeOf(() => module.loadMethod('forward'))).toBe('ERR_OPTION_WRONG_TYPE');
    expect(module.isMethodLoaded('forward')).toBe(false);
    module.dispose();
  });
});

describe('Module options ownership', () => {
  test('mutating, clearing or reusing the caller map after load changes nothing', () => {
    fixture = writeMlpProgram();
    const recorder = new RecordingBackend();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(recorder),
    });
    const { map, builder } = optionsWithPath('/caches/a.bin');
    const nested = [{ key: 'workspace_sharing_mode', value: 1 }];
    map.setOptions('Other', nested);
    module.load(map);
    builder.setOption('packed_cache_path', '/caches/b.bin');
    builder.entries.length = 0;
    (nested[0] as { value: number }).value = 2;
    map.setOptions('XnnpackBackend', [{ key: 'packed_cache_path', value: '/caches/c.bin' }]);
    module.loadMethod('forward');
    expect(recorder.inits[0]).toEqual([{ key: 'packed_cache_path', value: '/caches/a.bin' }]);
    expect(module.backendOptions().getOptions('Other')).toEqual([
      { key: 'workspace_sharing_mode', value: 1 },
    ]);
  });

  test('a failing load changes nothing: options stay, the program stays', () => {
    fixture = writeMlpProgram();
    const recorder = new RecordingBackend();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(recorder),
    });
    module.load(optionsWithPath('/caches/a.bin').map);
    const tooLong: { key: string; value: string }[] = [{ key: 'packed_cache_path', value: 'ok' }];
    const bad = new LoadBackendOptionsMap().setOptions('XnnpackBackend', tooLong);
    tooLong[0] = { key: 'packed_cache_path', value: `/${'x'.repeat(255)}` };
    expect(codeOf(() => module.load(bad))).toBe('ERR_OPTION_VALUE_TOO_LONG');
    expect(module.isLoaded()).toBe(true);
    expect(module.backendOptions().getOption('XnnpackBackend', 'packed_cache_path', 'string')).toBe(
      '/caches/a.bin',
    );
  });

  test('a program that fails to load installs no options and stays unloaded', () => {
    fixture = writeMlpProgram();
    writeFileSync(
      join(fixture.dir, 'model.safetensors'),
      new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]),
    );
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(new RecordingBackend()),
    });
    expect(codeOf(() => module.load(optionsWithPath('/caches/a.bin').map))).toBe(
      'ERR_SAFETENSORS_INVALID',
    );
    expect(module.isLoaded()).toBe(false);
    expect(module.backendOptions().size).toBe(0);
  });

  test('loadMethod: explicit map wins, then the owned map, else none; loaded methods keep theirs', () => {
    fixture = writeMlpProgram();
    const manifest = JSON.parse(readFileSync(fixture.manifestPath, 'utf8'));
    manifest.methods.other = manifest.methods.forward;
    manifest.methods.third = manifest.methods.forward;
    writeFileSync(fixture.manifestPath, JSON.stringify(manifest));
    const recorder = new RecordingBackend();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(recorder),
    });
    module.load();
    module.loadMethod('forward');
    expect(recorder.inits[0]).toEqual([]);
    module.load(optionsWithPath('/owned').map);
    module.loadMethod('other', { options: optionsWithPath('/explicit').map });
    module.loadMethod('third');
    expect(recorder.inits[1]).toEqual([{ key: 'packed_cache_path', value: '/explicit' }]);
    expect(recorder.inits[2]).toEqual([{ key: 'packed_cache_path', value: '/owned' }]);
    expect(module.methodOptions('forward').size).toBe(0);
    module.loadMethod('forward');
    expect(recorder.inits).toHaveLength(3);
    module.unload();
    expect(recorder.destroyed).toBe(3);
  });

  test('unknown methods and backends are clear errors', () => {
    fixture = writeMlpProgram();
    const module = new Module(fixture.manifestPath, { registry: new BackendRegistry() });
    expect(codeOf(() => module.loadMethod('forward'))).toBe('ERR_BACKEND_NOT_REGISTERED');
    expect(codeOf(() => module.loadMethod('nope'))).toBe('ERR_METHOD_NOT_FOUND');
    expect(codeOf(() => module.loadMethod('forward'))).toBe('ERR_BACKEND_NOT_REGISTERED');
    module.dispose();
    expect(codeOf(() => module.load())).toBe('ERR_MODULE_DISPOSED');
  });

  test('load() without a map keeps the options an earlier load(map) installed', () => {
    fixture = writeMlpProgram();
    const recorder = new RecordingBackend();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(recorder),
    });
    module.load(optionsWithPath('/caches/a.bin').map);
    module.load();
    module.loadMethod('forward');
    expect(recorder.inits[0]).toEqual([{ key: 'packed_cache_path', value: '/caches/a.bin' }]);
    // unload releases resources, not configuration: the next lazy run uses the same options
    module.unload();
    module.execute('forward', []);
    expect(recorder.inits[1]).toEqual([{ key: 'packed_cache_path', value: '/caches/a.bin' }]);
    // an explicit empty map clears them
    module.unload();
    module.load(new LoadBackendOptionsMap());
    module.loadMethod('forward');
    expect(recorder.inits[2]).toEqual([]);
    module.dispose();
    expect(module.backendOptions().size).toBe(0);
  });

  test('execute, loadMethod and methodNames before load() load the program lazily', () => {
    fixture = writeMlpProgram();
    const module = new Module(fixture.manifestPath, {
      registry: new BackendRegistry().register(new XnnpackBackend()),
    });
    expect(module.isLoaded()).toBe(false);
    const input = floats(2 * 16, 3);
    const [output] = module.execute('forward', [{ shape: [2, 16], data: input }]);
    expect(module.isLoaded()).toBe(true);
    expect(module.isMethodLoaded('forward')).toBe(true);
    expect(Array.from(output?.data ?? [])).toEqual(
      Array.from(referenceForward(fixture, input, 2)).map((value) => expect.closeTo(value, 4)),
    );
    const fresh = new Module(fixture.manifestPath, { registry: new BackendRegistry() });
    expect(fresh.methodNames()).toEqual(['forward']);
    expect(fresh.isLoaded()).toBe(true);
    fresh.dispose();
    module.dispose();
  });

  test('a lazy load that fails leaves the Module unloaded and reports the program error', () => {
    fixture = writeMlpProgram();
    writeFileSync(fixture.manifestPath, '{');
    const module = new Module(fixture.manifestPath, { registry: new BackendRegistry() });
    expect(codeOf(() => module.execute('forward', []))).toBe('ERR_MANIFEST_INVALID');
    expect(module.isLoaded()).toBe(false);
  });
});
