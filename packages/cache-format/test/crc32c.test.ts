import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { crc32cUpdate } from '../src/crc32c.js';
import { CRC32C_TABLES } from '../src/crc32c-tables.js';
import { crc32cOf } from '../src/index.js';

const POLYNOMIAL = 0x82f63b78; // CRC32C, reflected

/** The CRC a bit at a time: slow, obviously right, no table. */
function bitwiseCrc32c(bytes: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
  }
  return ~crc >>> 0;
}

describe('CRC32C tables', () => {
  it('are the slicing-by-8 tables of the polynomial 0x82F63B78', () => {
    const derived = new Uint32Array(8 * 256);
    for (let byte = 0; byte < 256; byte++) {
      let crc = byte;
      for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
      derived[byte] = crc;
    }
    for (let slice = 1; slice < 8; slice++) {
      for (let byte = 0; byte < 256; byte++) {
        const before = derived[(slice - 1) * 256 + byte] as number;
        derived[slice * 256 + byte] = (before >>> 8) ^ (derived[before & 0xff] as number);
      }
    }
    expect(CRC32C_TABLES).toEqual(derived);
  });
});

describe('crc32cUpdate', () => {
  it('gives the RFC 3720 B.4 and check values', () => {
    const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
    expect(crc32cUpdate(0, new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32cUpdate(0, new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32cUpdate(0, ascending)).toBe(0x46dd794e);
    expect(crc32cUpdate(0, ascending.reverse())).toBe(0x113fdb5c);
    expect(crc32cUpdate(0, new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32cUpdate(0, new Uint8Array(0))).toBe(0);
  });

  test.prop([fc.uint8Array({ maxLength: 300 }), fc.nat(300), fc.nat(300)], { numRuns: 300 })(
    'equals the bitwise CRC at any length, offset and split',
    (bytes, from, split) => {
      const view = bytes.subarray(Math.min(from, bytes.length));
      const cut = Math.min(split, view.length);
      const whole = bitwiseCrc32c(view);
      expect(crc32cUpdate(0, view)).toBe(whole);
      expect(crc32cUpdate(crc32cUpdate(0, view.subarray(0, cut)), view.subarray(cut))).toBe(whole);
      expect(crc32cOf(view.subarray(cut), crc32cOf(view.subarray(0, cut)))).toBe(whole);
    },
  );
});
