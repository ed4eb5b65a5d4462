// The addon's hardware CRC32C and cache-format's JavaScript one agree on any bytes, at any
// offset and when continued across chunks: which one a commit used never changes the file.

import { fc, test } from '@fast-check/vitest';
import { crc32cOf } from '@memlayer/cache-format';
import { crc32c, crc32cImplementation } from '@memlayer/mmap-native';
import { describe, expect, it } from 'vitest';
import { dataCrc32c } from '../src/storage/data-crc.js';

describe('CRC32C of entry data', () => {
  it('is the addon one here', () => {
    expect(crc32cImplementation()).not.toBeNull();
    expect(dataCrc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
  });

  test.prop(
    [
      fc.uint8Array({ maxLength: 5000 }),
      fc.nat(31),
      fc.array(fc.nat(5000), { maxLength: 4 }),
      fc.nat(),
    ],
    { numRuns: 300 },
  )(
    'native and JavaScript agree at random lengths, offsets and continuations',
    (bytes, offset, cuts, start) => {
      const view = bytes.subarray(Math.min(offset, bytes.length));
      const previous = start >>> 0;
      const whole = crc32cOf(view, previous);
      expect(crc32c(view, previous)).toBe(whole);
      expect(dataCrc32c(view, previous)).toBe(whole);
      const points = [...new Set(cuts.map((cut) => Math.min(cut, view.length)))].sort(
        (a, b) => a - b,
      );
      let native = previous;
      let js = previous;
      let from = 0;
      for (const to of [...points, view.length]) {
        native = crc32c(view.subarray(from, to), native);
        js = crc32cOf(view.subarray(from, to), js);
        from = to;
      }
      expect(native).toBe(whole);
      expect(js).toBe(whole);
    },
  );

  it('agrees on a few MiB (the size of packed entries)', () => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 7);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    expect(crc32c(bytes)).toBe(crc32cOf(bytes));
  });
});
