import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeviceAllocator, SimDevice } from '../src/index.js';
import { errorCode } from './support/callables.js';

describe('DeviceAllocator', () => {
  it('hands out 64-byte-aligned, non-zero, non-overlapping addresses', () => {
    const a = new DeviceAllocator({ capacity: 4096, baseAddress: 0x1000 });
    const x = a.alloc(1);
    const y = a.alloc(65);
    const z = a.alloc(64);
    expect([x.address, y.address, z.address]).toEqual([0x1000, 0x1040, 0x10c0]);
    expect([x.size, y.size, z.size]).toEqual([64, 128, 64]);
    expect(a.committedBytes).toBe(256);
    expect(a.totalFreeBytes).toBe(4096 - 256);
  });

  it('coalesces freed neighbours so the arena becomes one block again', () => {
    const a = new DeviceAllocator({ capacity: 64 * 10, baseAddress: 64 });
    const blocks = Array.from({ length: 10 }, () => a.alloc(64).address);
    expect(errorCode(() => a.alloc(1))).toBe('ERR_DEVICE_OUT_OF_MEMORY');
    for (const i of [1, 3, 5, 7]) a.free(blocks[i] as number);
    expect(a.freeBlockCount).toBe(4);
    expect(a.largestFreeBlock).toBe(64);
    expect(a.fragmentation).toBeCloseTo(0.75);
    // Fragmented: 256 bytes free but no 128-byte hole.
    expect(errorCode(() => a.alloc(128))).toBe('ERR_DEVICE_OUT_OF_MEMORY');
    for (const i of [0, 2, 4, 6, 8, 9]) a.free(blocks[i] as number);
    expect(a.freeBlockCount).toBe(1);
    expect(a.fragmentation).toBe(0);
    expect(a.alloc(640).address).toBe(64);
  });

  it('free of an unknown or interior address is a no-op', () => {
    const a = new DeviceAllocator({ capacity: 1024 });
    const x = a.alloc(128);
    expect(a.free(x.address + 64)).toBeUndefined();
    expect(a.free(12345)).toBeUndefined();
    expect(a.committedBytes).toBe(128);
    expect(a.free(x.address)).toBeDefined();
    expect(a.free(x.address)).toBeUndefined();
    expect(a.committedBytes).toBe(0);
  });

  it('best-fit picks the smallest hole that fits', () => {
    const a = new DeviceAllocator({ capacity: 64 * 8, strategy: 'best-fit' });
    const blocks = Array.from({ length: 8 }, () => a.alloc(64).address);
    a.free(blocks[0] as number);
    a.free(blocks[1] as number); // hole of 128 at 0
    a.free(blocks[4] as number); // hole of 64 at 256
    expect(a.alloc(64).address).toBe(blocks[4]);
    const first = new DeviceAllocator({ capacity: 64 * 8, strategy: 'first-fit' });
    const fb = Array.from({ length: 8 }, () => first.alloc(64).address);
    first.free(fb[0] as number);
    first.free(fb[1] as number);
    first.free(fb[4] as number);
    expect(first.alloc(64).address).toBe(fb[0]);
  });

  it('rejects bad arguments with INVALID_ARGUMENT', () => {
    expect(errorCode(() => new DeviceAllocator({ capacity: 10 }))).toBe('ERR_INVALID_ARGUMENT');
    expect(errorCode(() => new DeviceAllocator({ capacity: 1024, baseAddress: 0 }))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(errorCode(() => new DeviceAllocator({ capacity: 1024 }).alloc(0))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
  });

  it('matches a reference model under random alloc/free (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('first-fit' as const, 'best-fit' as const),
        fc.array(
          fc.oneof(
            fc.record({ alloc: fc.integer({ min: 1, max: 3000 }) }),
            fc.record({ free: fc.nat(50) }),
          ),
          {
            maxLength: 120,
          },
        ),
        (strategy, ops) => {
          const capacity = 64 * 256;
          const a = new DeviceAllocator({ capacity, strategy, baseAddress: 0x40 });
          const live = new Map<number, number>();
          for (const op of ops) {
            if ('alloc' in op) {
              try {
                const x = a.alloc(op.alloc);
                expect(x.address % 64).toBe(0);
                expect(x.address).toBeGreaterThan(0);
                expect(x.size).toBe(Math.ceil(op.alloc / 64) * 64);
                for (const [addr, size] of live) {
                  expect(x.address + x.size <= addr || addr + size <= x.address).toBe(true);
                }
                live.set(x.address, x.size);
              } catch (error) {
                expect((error as { code: string }).code).toBe('ERR_DEVICE_OUT_OF_MEMORY');
                expect(a.largestFreeBlock).toBeLessThan(Math.ceil(op.alloc / 64) * 64);
              }
            } else {
              const keys = [...live.keys()];
              const key = keys[op.free % Math.max(1, keys.length)];
              if (key !== undefined) {
                a.free(key);
                live.delete(key);
              }
            }
            const used = [...live.values()].reduce((s, v) => s + v, 0);
            expect(a.committedBytes).toBe(used);
            expect(a.totalFreeBytes).toBe(capacity - used);
          }
          for (const key of live.keys()) a.free(key);
          expect(a.freeBlockCount).toBe(1);
          expect(a.largestFreeBlock).toBe(capacity);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('SimDevice', () => {
  it('H2D and D2H move real bytes inside live allocations only', () => {
    const device = new SimDevice({ capacity: 1 << 16 });
    const addr = device.malloc(100);
    device.copyToDevice(addr + 10, Uint8Array.of(1, 2, 3));
    expect([...device.copyFromDevice(addr + 9, 5)]).toEqual([0, 1, 2, 3, 0]);
    expect(errorCode(() => device.copyToDevice(addr + 95, new Uint8Array(10)))).toBe(
      'ERR_DEVICE_BAD_ADDRESS',
    );
    expect(errorCode(() => device.copyFromDevice(addr + 4096, 1))).toBe('ERR_DEVICE_BAD_ADDRESS');
    device.free(addr);
    expect(errorCode(() => device.copyFromDevice(addr, 1))).toBe('ERR_DEVICE_BAD_ADDRESS');
    expect(device.stats()).toMatchObject({ h2dBytes: 3, h2dCopies: 1, d2hBytes: 5 });
  });

  it('injected alloc and H2D failures fire exactly the requested number of times', () => {
    const device = new SimDevice({ capacity: 1 << 16 });
    device.failNext('alloc', 2);
    expect(errorCode(() => device.malloc(64))).toBe('ERR_DEVICE_ALLOC_FAILED');
    expect(errorCode(() => device.malloc(64))).toBe('ERR_DEVICE_ALLOC_FAILED');
    const addr = device.malloc(64);
    device.failNext('h2d');
    expect(errorCode(() => device.copyToDevice(addr, Uint8Array.of(1)))).toBe(
      'ERR_DEVICE_COPY_FAILED',
    );
    expect([...device.copyFromDevice(addr, 1)]).toEqual([0]);
    device.copyToDevice(addr, Uint8Array.of(1));
    expect(device.stats().committedBytes).toBe(64);
  });

  it('abandon mode forgets without freeing; finalize resets the device', () => {
    const device = new SimDevice({ capacity: 64 * 4 });
    const a = device.malloc(64);
    device.malloc(64);
    device.abandon();
    expect(errorCode(() => device.malloc(64))).toBe('ERR_DEVICE_LOST');
    expect(device.free(a)).toBe(true);
    // Forgotten, not returned: the bytes are not reusable until finalize.
    expect(device.stats()).toMatchObject({
      committedBytes: 64,
      totalFreeBytes: 128,
      abandonedBytes: 64,
      frees: 0,
    });
    device.finalize();
    expect(device.stats()).toMatchObject({
      committedBytes: 0,
      totalFreeBytes: 256,
      abandonedBytes: 128,
      abandoned: false,
    });
    expect(device.malloc(256)).toBeGreaterThan(0);
  });

  it('finalize frees everything; free of an unknown address is a counted no-op', () => {
    const device = new SimDevice({ capacity: 1 << 16 });
    for (let i = 0; i < 5; i++) device.malloc(100 * (i + 1));
    expect(device.free(42)).toBe(false);
    expect(device.stats().unknownFrees).toBe(1);
    device.finalize();
    expect(device.stats()).toMatchObject({
      committedBytes: 0,
      liveAllocations: 0,
      fragmentation: 0,
    });
  });
});
