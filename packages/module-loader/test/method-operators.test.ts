// A warm start finds every layer in the cache but makes a layer's operator object only when
// the method first needs it; a layer it had to pack gets its operator at once.
import { join } from 'node:path';
import * as xnnpackCache from '@memlayer/xnnpack-cache';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { BackendRegistry, Module, XnnpackBackend, type XnnpackHandle } from '../src/index.js';
import {
  cacheOptions,
  floats,
  type MlpFixture,
  referenceForward,
  writeMlpProgram,
} from './fixtures.js';

// The module's own binding, wrapped so that the test can count operators made from an offset.
vi.mock('@memlayer/xnnpack-cache', async (original) => {
  const actual = await original<typeof import('@memlayer/xnnpack-cache')>();
  return { ...actual, fullyConnectedNcF32At: vi.fn(actual.fullyConnectedNcF32At) };
});
const madeFromOffset = vi.mocked(xnnpackCache.fullyConnectedNcF32At);

let fixture: MlpFixture;
afterEach(() => fixture?.cleanup());

describe('operators of a method', () => {
  test('found in the cache: made when first read, once each, with the cold outputs', () => {
    fixture = writeMlpProgram();
    const cachePath = join(fixture.dir, 'weights.xpwc');
    const manager = new XNNWeightsCacheManager();
    const registry = new BackendRegistry().register(new XnnpackBackend({ caches: manager }));
    const input = floats(2 * 16, 3);
    const reference = referenceForward(fixture, input, 2);

    const cold = new Module(fixture.manifestPath, { registry });
    cold.load(cacheOptions(cachePath));
    madeFromOffset.mockClear();
    const [coldOutput] = cold.execute('forward', [{ shape: [2, 16], data: input }]);
    const coldHandle = cold.methodHandle('forward') as XnnpackHandle;
    // Packed layers got their operators at once.
    expect(coldHandle.cacheHits).toBe(0);
    expect(madeFromOffset).not.toHaveBeenCalled();
    expect(coldOutput?.data).toHaveLength(reference.length);
    cold.dispose();

    const warm = new Module(fixture.manifestPath, { registry });
    warm.load(cacheOptions(cachePath));
    warm.loadMethod('forward');
    const handle = warm.methodHandle('forward') as XnnpackHandle;
    expect(handle.cacheHits).toBe(3);
    expect(handle.operators.size).toBe(3);
    expect([...handle.operators.keys()]).toEqual([0, 2, 4]);
    expect(handle.operators.has(1)).toBe(false);
    expect(madeFromOffset).not.toHaveBeenCalled();

    const [warmOutput] = warm.execute('forward', [{ shape: [2, 16], data: input }]);
    expect(warmOutput?.data).toEqual(coldOutput?.data);
    expect(madeFromOffset).toHaveBeenCalledTimes(3);
    // Made once: later runs and reads get the same objects.
    const first = handle.operators.get(0);
    warm.execute('forward', [{ shape: [2, 16], data: input }]);
    expect(handle.operators.get(0)).toBe(first);
    expect([...handle.operators.values()]).toHaveLength(3);
    expect(madeFromOffset).toHaveBeenCalledTimes(3);
    expect(handle.operators.get(0)).toMatchObject({ cacheHit: true, inputChannels: 16 });

    warm.unloadMethod('forward');
    expect(handle.operators.size).toBe(0);
    expect(handle.operators.get(0)).toBeUndefined();
    warm.dispose();
  });

  test('read through iteration: every operator is made, in node order', () => {
    fixture = writeMlpProgram([8, 12, 4]);
    const cachePath = join(fixture.dir, 'weights.xpwc');
    const manager = new XNNWeightsCacheManager();
    const registry = new BackendRegistry().register(new XnnpackBackend({ caches: manager }));
    for (let start = 0; start < 2; start++) {
      const module = new Module(fixture.manifestPath, { registry });
      module.load(cacheOptions(cachePath));
      module.loadMethod('forward');
      const handle = module.methodHandle('forward') as XnnpackHandle;
      madeFromOffset.mockClear();
      const seen: number[] = [];
      handle.operators.forEach((operator, index) => {
        expect(operator.outputChannels).toBe(index === 0 ? 12 : 4);
        seen.push(index);
      });
      expect(seen).toEqual([0, 2]);
      // The cold start packed both (made then), the warm one found both (made now).
      expect(madeFromOffset).toHaveBeenCalledTimes(start === 0 ? 0 : 2);
      module.dispose();
    }
  });
});
