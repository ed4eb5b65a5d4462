// A cache entry's name is its kernel's content key followed by its bias's: method plans keep
// the names and split them back only when a layer misses the cache.
import { describe, expect, it } from 'vitest';
import { NodeKeyColumns } from '../src/backends/node-keys.js';
import { contentKey, isEntryName, kernelKeyEnd } from '../src/safetensors/digest.js';

const digest = (c: string) => c.repeat(64);

describe('entry names', () => {
  it('split after the kernel key, whatever its dtype suffix', () => {
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const kernel = contentKey(digest('a'), dtype);
      const bias = contentKey(digest('b'), dtype);
      expect(kernelKeyEnd(kernel + bias)).toBe(kernel.length);
      expect(kernelKeyEnd(kernel)).toBe(kernel.length);
      expect(isEntryName(kernel + bias, true)).toBe(true);
      expect(isEntryName(kernel, false)).toBe(true);
      expect(isEntryName(kernel, true)).toBe(false);
      expect(isEntryName(kernel + bias, false)).toBe(false);
    }
  });

  it('are refused when they do not start with a content key', () => {
    expect(kernelKeyEnd('a'.repeat(63))).toBe(-1);
    expect(kernelKeyEnd(`${digest('a')}.f32`)).toBe(-1);
    expect(isEntryName(`${digest('a')}${'b'.repeat(63)}`, true)).toBe(false);
    expect(isEntryName('', false)).toBe(false);
  });

  it('give a plan keys columns that split them only when read', () => {
    const kernel = digest('c');
    const bias = contentKey(digest('d'), 'BF16');
    const columns = new NodeKeyColumns(
      null,
      null,
      2,
      Int32Array.of(4, 4, 2),
      Int32Array.of(3, 0, 4),
      [kernel + bias, undefined, kernel],
    );
    expect(columns.entryNames).toEqual([kernel + bias, undefined, kernel]);
    expect(columns.kernels).toEqual([kernel, undefined, kernel]);
    expect(columns.biases[0]).toBe(bias);
    expect(columns.biases[2]).toBeNull();
    expect(columns.get(0)).toEqual({ kernel, bias });
    expect(columns.get(1)).toBeUndefined();
    expect([...columns.keys()]).toEqual([0, 2]);
  });
});
