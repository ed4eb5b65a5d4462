import { describe, expect, test } from 'vitest';
import {
  BackendOptions,
  LoadBackendOptionsMap,
  MAX_BACKENDS,
  MAX_OPTION_KEY_BYTES,
  MAX_OPTION_STRING_BYTES,
  OwnedOptionsMap,
} from '../src/index.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('BackendOptions', () => {
  test('setOption appends, then replaces an existing key even with another type', () => {
    const options = new BackendOptions(4);
    options.setOption('weight_cache_enabled', true).setOption('workspace_sharing_mode', 1);
    options.setOption('weight_cache_enabled', 'yes');
    expect(options.size).toBe(2);
    expect(options.getOption('weight_cache_enabled', 'string')).toBe('yes');
    expect(options.getOption('workspace_sharing_mode', 'int')).toBe(1);
  });

  test('a full builder rejects a new key but still replaces an existing one', () => {
    const options = new BackendOptions(2);
    options.setOption('a', 1).setOption('b', 2);
    expect(codeOf(() => options.setOption('c', 3))).toBe('ERR_OPTIONS_FULL');
    options.setOption('b', 5);
    expect(options.getOption('b', 'int')).toBe(5);
  });

  test('not found and wrong type are distinct errors', () => {
    const options = new BackendOptions().setOption('flag', true);
    expect(codeOf(() => options.getOption('missing', 'boolean'))).toBe('ERR_OPTION_NOT_FOUND');
    expect(codeOf(() => options.getOption('flag', 'int'))).toBe('ERR_OPTION_WRONG_TYPE');
  });

  test('a 256-byte string value is rejected, not truncated; 255 bytes is accepted', () => {
    const options = new BackendOptions();
    const path255 = `/tmp/${'p'.repeat(MAX_OPTION_STRING_BYTES - 5)}`;
    options.setOption('packed_cache_path', path255);
    expect(options.getOption('packed_cache_path', 'string')).toBe(path255);
    expect(codeOf(() => options.setOption('packed_cache_path', `${path255}x`))).toBe(
      'ERR_OPTION_VALUE_TOO_LONG',
    );
    // The earlier value stays: a rejected set changes nothing.
    expect(options.getOption('packed_cache_path', 'string')).toBe(path255);
  });

  test('string limits count UTF-8 bytes, as upstream char arrays do', () => {
    const options = new BackendOptions();
    // 128 two-byte characters = 256 bytes.
    expect(codeOf(() => options.setOption('k', 'é'.repeat(128)))).toBe('ERR_OPTION_VALUE_TOO_LONG');
    options.setOption('k', 'é'.repeat(127));
  });

  test('keys longer than 63 bytes, empty keys and non-strings are rejected', () => {
    const options = new BackendOptions();
    options.setOption('k'.repeat(MAX_OPTION_KEY_BYTES), 1);
    expect(codeOf(() => options.setOption('k'.repeat(MAX_OPTION_KEY_BYTES + 1), 1))).toBe(
      'ERR_OPTION_INVALID_KEY',
    );
    expect(codeOf(() => options.setOption('', 1))).toBe('ERR_OPTION_INVALID_KEY');
    expect(codeOf(() => options.setOption(7 as unknown as string, 1))).toBe(
      'ERR_OPTION_INVALID_KEY',
    );
  });

  test('a NUL byte in a key or a string value is rejected (upstream C strings end there)', () => {
    const options = new BackendOptions();
    expect(codeOf(() => options.setOption('packed\0cache_path', 'x'))).toBe(
      'ERR_OPTION_INVALID_KEY',
    );
    expect(codeOf(() => options.setOption('packed_cache_path', '/a.xpwc\0/b'))).toBe(
      'ERR_OPTION_INVALID_VALUE',
    );
    expect(options.size).toBe(0);
  });

  test('values must be boolean, 32-bit integer or string', () => {
    const options = new BackendOptions();
    expect(codeOf(() => options.setOption('x', 1.5))).toBe('ERR_OPTION_INVALID_VALUE');
    expect(codeOf(() => options.setOption('x', 2 ** 31))).toBe('ERR_OPTION_INVALID_VALUE');
    expect(codeOf(() => options.setOption('x', {} as unknown as string))).toBe(
      'ERR_OPTION_INVALID_VALUE',
    );
    options.setOption('x', -(2 ** 31));
    expect(options.getOption('x', 'int')).toBe(-(2 ** 31));
  });
});

describe('LoadBackendOptionsMap', () => {
  test('the ninth backend id is rejected; replacing an id works when full', () => {
    const map = new LoadBackendOptionsMap();
    for (let index = 0; index < MAX_BACKENDS; index++)
      map.setOptions(`backend${index}`, [{ key: 'i', value: index }]);
    expect(codeOf(() => map.setOptions('backend8', []))).toBe('ERR_BACKEND_MAP_FULL');
    map.setOptions('backend3', [{ key: 'i', value: 33 }]);
    expect(map.size).toBe(MAX_BACKENDS);
    expect(map.getOptions('backend3')).toEqual([{ key: 'i', value: 33 }]);
  });

  test('empty or oversized backend ids are rejected', () => {
    const map = new LoadBackendOptionsMap();
    expect(codeOf(() => map.setOptions('', []))).toBe('ERR_BACKEND_ID_INVALID');
    expect(codeOf(() => map.setOptions('b'.repeat(64), []))).toBe('ERR_BACKEND_ID_INVALID');
    expect(codeOf(() => map.setOptions('Xnnpack\0Backend', []))).toBe('ERR_BACKEND_ID_INVALID');
    map.setOptions('b'.repeat(63), []);
  });

  test('getOptions of an unknown id is empty; entryAt is bounds-checked', () => {
    const map = new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions().setOption('a', true),
    );
    expect(map.getOptions('Other')).toEqual([]);
    expect(map.hasOptions('XnnpackBackend')).toBe(true);
    expect(map.entryAt(0).backendId).toBe('XnnpackBackend');
    expect(codeOf(() => map.entryAt(1))).toBe('ERR_INDEX_OUT_OF_RANGE');
    expect(codeOf(() => map.entryAt(-1))).toBe('ERR_INDEX_OUT_OF_RANGE');
  });

  test('the map keeps references to the caller arrays (the hazard a Module must copy away)', () => {
    const list = [{ key: 'packed_cache_path', value: '/a' }];
    const map = new LoadBackendOptionsMap().setOptions('XnnpackBackend', list);
    list[0] = { key: 'packed_cache_path', value: '/b' };
    expect(map.getOptions('XnnpackBackend')[0]?.value).toBe('/b');
  });

  test('a list with a duplicated key is rejected', () => {
    const map = new LoadBackendOptionsMap();
    const list = [
      { key: 'a', value: 1 },
      { key: 'a', value: 2 },
    ];
    expect(codeOf(() => map.setOptions('X', list))).toBe('ERR_OPTION_INVALID_KEY');
  });
});

describe('OwnedOptionsMap.copyOf', () => {
  test('is deep: mutating, clearing or reusing the source changes nothing', () => {
    const builder = new BackendOptions().setOption('packed_cache_path', '/cache/a.bin');
    const list = [{ key: 'flag', value: true }];
    const map = new LoadBackendOptionsMap()
      .setOptions('XnnpackBackend', builder)
      .setOptions('Other', list);
    const owned = OwnedOptionsMap.copyOf(map);
    builder.setOption('packed_cache_path', '/cache/b.bin');
    (list[0] as { value: boolean }).value = false;
    list.length = 0;
    map.setOptions('XnnpackBackend', []);
    expect(owned.getOption('XnnpackBackend', 'packed_cache_path', 'string')).toBe('/cache/a.bin');
    expect(owned.getOptions('Other')).toEqual([{ key: 'flag', value: true }]);
    expect(Object.isFrozen(owned.getOptions('Other'))).toBe(true);
  });

  test('re-validates: a caller that broke its array after setOptions is caught at copy time', () => {
    const list: { key: string; value: unknown }[] = [{ key: 'p', value: 'ok' }];
    const map = new LoadBackendOptionsMap().setOptions(
      'X',
      list as { key: string; value: string }[],
    );
    list[0] = { key: 'p', value: 'x'.repeat(300) };
    expect(codeOf(() => OwnedOptionsMap.copyOf(map))).toBe('ERR_OPTION_VALUE_TOO_LONG');
  });
});
