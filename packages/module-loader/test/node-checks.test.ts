// A method load checks each linear node's tensors against the weight tables' columns (no
// tensor info is made for it): the same errors with the weight cache on or off.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  BackendRegistry,
  LoadBackendOptionsMap,
  Module,
  ModuleLoaderError,
  XnnpackBackend,
  type XnnpackHandle,
} from '../src/index.js';
import { type MlpFixture, writeMlpProgram } from './fixtures.js';

let fixture: MlpFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

/** A safetensors file of one I32 tensor "ints" of shape [32, 16]: not a float weight. */
function intTensorFile(path: string): void {
  const header = JSON.stringify({
    ints: { dtype: 'I32', shape: [32, 16], data_offsets: [0, 2048] },
  });
  const padded = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const bytes = new Uint8Array(8 + padded.length + 2048);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(padded.length), true);
  bytes.set(Buffer.from(padded), 8);
  writeFileSync(path, bytes);
}

/**
 * The MLP fixture (l0.weight [32, 16], l0.bias [32], l1.weight [24, 32], l2.weight [8, 24],
 * l2.bias [8]; linear nodes 0, 2 and 4) plus ints.safetensors.
 */
function program(): MlpFixture {
  fixture = writeMlpProgram();
  intTensorFile(join(fixture.dir, 'ints.safetensors'));
  const manifest = JSON.parse(readFileSync(fixture.manifestPath, 'utf8'));
  manifest.weights.push('ints.safetensors');
  writeFileSync(fixture.manifestPath, JSON.stringify(manifest));
  return fixture;
}

function patchNode(path: string, index: number, patch: Record<string, unknown>): void {
  const manifest = JSON.parse(readFileSync(path, 'utf8'));
  Object.assign(manifest.methods.forward.graph[index], patch);
  writeFileSync(path, JSON.stringify(manifest));
}

type Mode = 'cache file' | 'heap cache' | 'cache off';

function options(mode: Mode, dir: string): BackendOptions {
  if (mode === 'cache off') return new BackendOptions().setOption('weight_cache_enabled', false);
  if (mode === 'heap cache') return new BackendOptions();
  return new BackendOptions().setOption('packed_cache_path', join(dir, 'cache.xpwc'));
}

function loadForward(path: string, mode: Mode, dir: string): Module {
  const module = new Module(path, {
    registry: new BackendRegistry().register(new XnnpackBackend()),
  });
  module.load(new LoadBackendOptionsMap().setOptions('XnnpackBackend', options(mode, dir)));
  module.loadMethod('forward');
  return module;
}

function loadError(path: string, mode: Mode, dir: string): ModuleLoaderError {
  try {
    loadForward(path, mode, dir).dispose();
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  }
  throw new Error('expected the method load to fail');
}

const cases: [string, number, Record<string, unknown>, string][] = [
  ['a missing weight', 0, { weight: 'nope' }, `weight "nope" is not in the program's weights`],
  ['an I32 weight', 0, { weight: 'ints' }, `weight "ints" is not in the program's weights`],
  [
    'a weight of other in features',
    0,
    { weight: 'l1.weight' },
    'weight "l1.weight" has shape [24, 32]; expected [out, 16]',
  ],
  [
    'a rank-1 weight',
    2,
    { weight: 'l0.bias' },
    'weight "l0.bias" has shape [32]; expected [out, 32]',
  ],
  ['a missing bias', 4, { bias: 'nope' }, `bias "nope" is not in the program's weights`],
  ['an I32 bias', 4, { bias: 'ints' }, `bias "ints" is not in the program's weights`],
  ['a bias of other size', 4, { bias: 'l0.bias' }, 'bias "l0.bias" has shape [32]; expected [8]'],
  ['a rank-2 bias', 4, { bias: 'l2.weight' }, 'bias "l2.weight" has shape [8, 24]; expected [8]'],
];

describe('linear node checks', () => {
  for (const mode of ['cache file', 'heap cache', 'cache off'] as const) {
    test.each(cases)(
      `${mode}: %s is ERR_MANIFEST_INVALID at its JSON path`,
      (_what, index, patch, message) => {
        const { manifestPath, dir } = program();
        patchNode(manifestPath, index, patch);
        const error = loadError(manifestPath, mode, dir);
        const role = 'weight' in patch ? 'weight' : 'bias';
        const field = `methods.forward.graph[${index}].${role}`;
        expect(error.code).toBe('ERR_MANIFEST_INVALID');
        expect(error.file).toBe(manifestPath);
        expect(error.field).toBe(field);
        expect(error.message).toBe(`${manifestPath}: ${field}: ${message}`);
      },
    );
  }

  test('the keys of each linear node read as a map by node index', () => {
    const { manifestPath, dir } = program();
    for (const mode of ['cache file', 'cache off'] as const) {
      const module = loadForward(manifestPath, mode, dir);
      const { contentKeys } = module.methodHandle('forward') as XnnpackHandle;
      expect(contentKeys.size).toBe(3);
      expect([...contentKeys.keys()]).toEqual([0, 2, 4]);
      expect(contentKeys.has(1)).toBe(false);
      expect(contentKeys.get(1)).toBe(undefined);
      const keys = contentKeys.get(2);
      if (mode === 'cache off') {
        expect([...contentKeys.values()]).toEqual([
          { kernel: 'l0.weight', bias: 'l0.bias' },
          { kernel: 'l1.weight', bias: null },
          { kernel: 'l2.weight', bias: 'l2.bias' },
        ]);
      } else {
        expect(keys?.kernel).toMatch(/^[0-9a-f]{64}$/);
        expect(keys?.bias).toBe(null);
      }
      expect(new Map(contentKeys)).toEqual(new Map([...contentKeys.entries()]));
      const seen: number[] = [];
      contentKeys.forEach((value, node, map) => {
        expect(map.get(node)).toEqual(value);
        seen.push(node);
      });
      expect(seen).toEqual([0, 2, 4]);
      module.dispose();
    }
  });

  test('a node that reads an older value than the one before it gets the features of that value', () => {
    const { manifestPath, dir } = program();
    // Node 2 reads x (16 features), not a0 (32): l1.weight [24, 32] no longer fits.
    patchNode(manifestPath, 2, { input: 'x' });
    expect(loadError(manifestPath, 'cache off', dir).message).toBe(
      `${manifestPath}: methods.forward.graph[2].weight: weight "l1.weight" has shape [24, 32]; expected [out, 16]`,
    );
    // Node 4 reads h1 (24 features, before the gelu): fits, and runs.
    patchNode(manifestPath, 2, { input: 'a0' });
    patchNode(manifestPath, 4, { input: 'h1' });
    const module = loadForward(manifestPath, 'heap cache', dir);
    const [output] = module.execute('forward', [{ shape: [2, 16], data: new Float32Array(32) }]);
    expect(output?.shape).toEqual([2, 8]);
    module.dispose();
  });

  test('the first node may read any input, not only the last', () => {
    const { manifestPath, dir } = program();
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    manifest.methods.forward.inputs.push({ name: 'y', features: 5 });
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const module = loadForward(manifestPath, 'cache off', dir);
    const x = { shape: [1, 16] as [number, number], data: new Float32Array(16) };
    const y = { shape: [1, 5] as [number, number], data: new Float32Array(5) };
    expect(module.execute('forward', [x, y])[0]?.shape).toEqual([1, 8]);
    module.dispose();
    patchNode(manifestPath, 0, { input: 'y' });
    expect(loadError(manifestPath, 'cache off', dir).message).toContain(
      'weight "l0.weight" has shape [32, 16]; expected [out, 5]',
    );
  });
});
