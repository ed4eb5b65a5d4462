import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FNV1A64_OFFSET_BASIS, FNV1A64_PRIME, Fnv1a64, fnv1a64 } from '../src/index.js';
import { fnvReference } from './support/reference.js';

describe('FNV-1a 64', () => {
  it('empty input is the offset basis; "a" is 0xaf63dc4c8601ec8c', () => {
    expect([FNV1A64_OFFSET_BASIS, FNV1A64_PRIME]).toEqual([0xcbf29ce484222325n, 0x100000001b3n]);
    expect(fnv1a64(new Uint8Array(0))).toBe(0xcbf29ce484222325n);
    expect(fnv1a64(new TextEncoder().encode('a'))).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64(new TextEncoder().encode('foobar'))).toBe(0x85944171f73967e8n);
  });

  it('equals the BigInt reference on random inputs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        expect(fnv1a64(bytes)).toBe(fnvReference(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('equals the reference on high bytes and long runs that exercise every carry', () => {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 131 + (i >> 7)) & 0xff);
    expect(fnv1a64(bytes)).toBe(fnvReference(bytes));
    expect(fnv1a64(new Uint8Array(4096).fill(0xff))).toBe(
      fnvReference(new Uint8Array(4096).fill(0xff)),
    );
  });

  it('streaming updates equal one-shot hashing', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(300), (bytes, cut) => {
        const at = Math.min(cut, bytes.length);
        const streamed = new Fnv1a64()
          .update(bytes.subarray(0, at))
          .update(bytes.subarray(at))
          .digest();
        expect(streamed).toBe(fnv1a64(bytes));
      }),
    );
  });

  it('hashes a multi-megabyte buffer to the reference value', () => {
    const bytes = new Uint8Array(4 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    expect(fnv1a64(bytes)).toBe(fnvReference(bytes));
  });
});
