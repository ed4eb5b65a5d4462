import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import * as api from '../src/index.js';
import {
  BackendOptions,
  BackendRegistry,
  LoadBackendOptionsMap,
  MODULE_LOADER_ERROR_CODES,
  Module,
  ModuleLoaderError,
  readRegularFile,
} from '../src/index.js';

function errorOf(run: () => unknown): ModuleLoaderError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  }
  throw new Error('expected a ModuleLoaderError, nothing was thrown');
}

describe('error codes', () => {
  test('the exported list is unique, follows ERR_ naming and is the README table', () => {
    expect(new Set(MODULE_LOADER_ERROR_CODES).size).toBe(MODULE_LOADER_ERROR_CODES.length);
    for (const code of MODULE_LOADER_ERROR_CODES) expect(code).toMatch(/^ERR_[A-Z]+(_[A-Z]+)+$/);
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const table = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## Limits'));
    const documented = new Set(table.match(/`ERR_[A-Z_]+`/g)?.map((code) => code.slice(1, -1)));
    expect([...documented].sort()).toEqual([...MODULE_LOADER_ERROR_CODES].sort());
  });

  test('a call made wrongly is ERR_INVALID_ARGUMENT with an "Expected X for Y but received Z" message', () => {
    const registry = new BackendRegistry();
    const wrongCalls = [
      () => new Module('', { registry }),
      () => new Module(7 as unknown as string, { registry }),
      () => new Module('program.json', { registry: {} as BackendRegistry }),
      () => new Module('model.pte', { dataFiles: [''] }),
      () => new BackendOptions(0),
      () => new LoadBackendOptionsMap().setOptions('X', 'no' as unknown as []),
      () => readRegularFile('/dev/null', -1, { file: 'x', field: 'y' }),
    ];
    for (const call of wrongCalls) {
      const error = errorOf(call);
      expect(error.code).toBe('ERR_INVALID_ARGUMENT');
      expect(error.message).toMatch(/^Expected .+ for .+ but received .+/);
    }
  });

  test('option and method errors say what was expected and what was received', () => {
    const full = new BackendOptions(1).setOption('a', 1);
    expect(errorOf(() => full.setOption('b', 2)).message).toMatch(/^Expected .+ but received /);
    expect(errorOf(() => full.getOption('a', 'string')).message).toMatch(/^Expected a string /);
    expect(errorOf(() => full.getOption('zz', 'int')).message).toMatch(
      /^Expected .+ but received /,
    );
    const module = new Module('program.json', { registry: new BackendRegistry() });
    expect(errorOf(() => module.methodOptions('forward')).code).toBe('ERR_METHOD_NOT_LOADED');
  });

  test('the public API re-exports no internals', () => {
    for (const internal of [
      'checkXnnpackOption',
      'resolveXnnpackOptions',
      'utf8ByteLength',
      'validateOptionKey',
      'invalidArgument',
      'assertNoNul',
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
