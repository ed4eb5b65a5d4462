import { describe, expect, it } from 'vitest';
import { HeapStorage, PACKED_ALLOCATION_ALIGNMENT } from '../src/index.js';

describe('HeapStorage', () => {
  it('reserves aligned regions of exactly n bytes and accounts their reserved size', () => {
    const storage = new HeapStorage();
    const region = storage.reserve(100, { persistable: true });
    expect(region?.bytes.byteLength).toBe(100);
    expect(region?.bytes.byteOffset).toBe(0);
    expect(region?.reservedBytes).toBe(128);
    expect(128 % PACKED_ALLOCATION_ALIGNMENT).toBe(0);
    expect(storage.stats()).toEqual({
      heapBytes: 128,
      fileBytes: 0,
      orphanBytes: 0,
      mappedBytes: 0,
    });
  });

  it('releases a region once; a second release changes nothing', () => {
    const storage = new HeapStorage();
    const a = storage.reserve(64, { persistable: true });
    const b = storage.reserve(64, { persistable: false });
    if (a === null || b === null) throw new Error('reserve failed');
    storage.release(a);
    storage.release(a);
    expect(storage.stats().heapBytes).toBe(64);
    expect(storage.owns(b)).toBe(true);
    expect(storage.owns(a)).toBe(false);
  });

  it('returns null past maxBytes and works again after close', () => {
    const storage = new HeapStorage({ maxBytes: 256 });
    expect(storage.reserve(200, { persistable: true })).not.toBeNull();
    expect(storage.reserve(64, { persistable: true })).toBeNull();
    storage.close();
    expect(storage.stats().heapBytes).toBe(0);
    expect(storage.reserve(256, { persistable: true })).not.toBeNull();
  });

  it('persists nothing and loads nothing', () => {
    const storage = new HeapStorage();
    const region = storage.reserve(64, { persistable: true });
    if (region === null) throw new Error('reserve failed');
    expect(storage.open({ hasEntries: false })).toEqual([]);
    expect(storage.persist([{ name: 'w', seed: 1, fingerprint: 2, dataSize: 64, region }])).toEqual(
      [],
    );
  });
});
