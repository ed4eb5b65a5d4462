import { readFileSync } from 'node:fs';
import { pageSize } from '@memlayer/mmap-native';
import { describe, expect, it } from 'vitest';
import { HeapStorage, PACKED_ALLOCATION_ALIGNMENT, type PackedRegion } from '../src/index.js';

describe('HeapStorage', () => {
  it('reserves aligned regions of exactly n bytes and accounts their reserved size', () => {
    const storage = new HeapStorage();
    const region = storage.reserve(100, { persistable: true });
    expect(region?.bytes.byteLength).toBe(100);
    expect((region?.bytes.byteOffset ?? 1) % PACKED_ALLOCATION_ALIGNMENT).toBe(0);
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

  it('carves small regions from shared buffers: aligned, disjoint, zeroed, released one by one', () => {
    const storage = new HeapStorage();
    const regions = [];
    for (let i = 0; i < 200; i++) {
      const region = storage.reserve(100 + i * 37, { persistable: true });
      if (region === null) throw new Error('reserve failed');
      expect(region.zeroed).toBe(true);
      expect(region.bytes.byteOffset % PACKED_ALLOCATION_ALIGNMENT).toBe(0);
      expect(region.bytes.every((b) => b === 0)).toBe(true);
      region.bytes.fill((i % 255) + 1);
      regions.push(region);
    }
    // Fewer buffers than regions, and no two regions of one buffer overlap.
    const buffers = new Set(regions.map((r) => r.bytes.buffer));
    expect(buffers.size).toBeLessThan(20);
    for (const buffer of buffers) {
      const spans = regions
        .filter((r) => r.bytes.buffer === buffer)
        .map((r) => [r.bytes.byteOffset, r.bytes.byteOffset + r.reservedBytes] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++) {
        expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] ?? 0);
      }
    }
    const total = regions.reduce((sum, r) => sum + r.reservedBytes, 0);
    for (let i = 0; i < regions.length; i += 2) storage.release(regions[i] as PackedRegion);
    const kept = regions.filter((_, i) => i % 2 === 1);
    expect(storage.stats().heapBytes).toBe(kept.reduce((sum, r) => sum + r.reservedBytes, 0));
    expect(storage.stats().heapBytes).toBeLessThan(total);
    // Releasing neighbours leaves a region's bytes untouched.
    regions.forEach((r, i) => {
      if (i % 2 === 1) expect(r.bytes.every((b) => b === (i % 255) + 1)).toBe(true);
    });
    // A reservation after releases gets fresh (zero) bytes, never a released region's.
    const fresh = storage.reserve(4096, { persistable: true });
    expect(fresh?.bytes.every((b) => b === 0)).toBe(true);
  });

  it('gives a large region a buffer of its own', () => {
    const storage = new HeapStorage();
    storage.reserve(64, { persistable: true });
    const large = storage.reserve(1 << 20, { persistable: true });
    expect(large?.bytes.byteOffset).toBe(0);
    expect(large?.bytes.buffer.byteLength).toBe(1 << 20);
    expect(large?.zeroed).toBe(true);
  });

  it('has the pages of a fresh buffer faulted in on another thread before they are written', async () => {
    const MiB = 1024 * 1024;
    const resident = () =>
      Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * pageSize();
    const storage = new HeapStorage();
    const before = resident();
    const region = storage.reserve(64 * MiB, { persistable: false });
    if (region === null) throw new Error('reserve failed');
    // Nothing writes the region: its pages become resident only through the prefault, which
    // runs on the thread pool (tens of milliseconds; the bound only catches a hang, as the
    // thread pool may wait its turn for seconds on a loaded machine).
    const deadline = Date.now() + 100_000;
    while (resident() - before < 48 * MiB && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(resident() - before).toBeGreaterThan(48 * MiB);
    expect(region.bytes.every((byte) => byte === 0)).toBe(true);
    storage.close();
  });

  it('counts each reservation under its fallback reason', () => {
    const storage = new HeapStorage({ fallbackReason: 'no-path' });
    storage.reserve(100, { persistable: true });
    storage.reserve(1 << 19, { persistable: true });
    expect(storage.stats().fallback).toEqual({ 'no-path': { count: 2, bytes: 128 + (1 << 19) } });
  });
});
