// Names are bytes: valid UTF-8 decodes to its text, anything else losslessly (surrogateescape).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameFromBytes, nameToBytes } from '../src/index.js';
import { expectError } from './support/expect-error.js';

const hex = (s: string) => Uint8Array.from(s.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
const units = (s: string) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));
const HAS_LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('nameFromBytes / nameToBytes', () => {
  // Expected values from CPython: bytes.decode('utf-8', 'surrogateescape').
  const PYTHON: Array<[string, number[]]> = [
    ['fffe', [0xdcff, 0xdcfe]],
    ['66e282', [0x66, 0xdce2, 0xdc82]],
    ['eda080', [0xdced, 0xdca0, 0xdc80]], // UTF-8 form of a surrogate: not well-formed
    ['c0af', [0xdcc0, 0xdcaf]], // overlong "/"
    ['f4908080', [0xdcf4, 0xdc90, 0xdc80, 0xdc80]], // above U+10FFFF
    ['e282acf09f98', [0x20ac, 0xdcf0, 0xdc9f, 0xdc98]], // truncated 4-byte sequence
    ['61c3a98062', [0x61, 0xe9, 0xdc80, 0x62]],
    ['f09f9880ff', [0xd83d, 0xde00, 0xdcff]],
  ];

  it.each(PYTHON)(
    '%s decodes as CPython surrogateescape does and encodes back',
    (bytes, expected) => {
      const name = nameFromBytes(hex(bytes));
      expect(units(name)).toEqual(expected);
      expect(nameToBytes(name)).toEqual(hex(bytes));
    },
  );

  it('valid UTF-8 is unchanged both ways (a BOM is kept)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (text) => {
        const utf8 = new TextEncoder().encode(text);
        expect(nameFromBytes(utf8)).toBe(text);
        expect(nameToBytes(text)).toEqual(utf8);
      }),
      { numRuns: 500 },
    );
    expect(nameFromBytes(hex('efbbbf61'))).toBe('\uFEFFa');
  });

  it('any bytes round trip, and only non-UTF-8 bytes give a name with a lone surrogate', () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const name = nameFromBytes(bytes);
        expect(nameToBytes(name)).toEqual(bytes);
        let valid = true;
        try {
          strict.decode(bytes);
        } catch {
          valid = false;
        }
        // A valid UTF-8 name never holds a lone surrogate: the two sets of names are disjoint.
        expect(HAS_LONE_SURROGATE.test(name)).toBe(!valid);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses strings that stand for no bytes or alias another name', () => {
    expectError(() => nameToBytes('a\uD800b'), 'ERR_XPWC_INVALID_ARGUMENT'); // lone high
    expectError(() => nameToBytes('\uDC41'), 'ERR_XPWC_INVALID_ARGUMENT'); // escape of < 0x80
    expectError(() => nameToBytes('\uDCC3\uDCA9'), 'ERR_XPWC_INVALID_ARGUMENT'); // = "é"
    expectError(() => nameToBytes(7 as unknown as string), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => nameFromBytes('ab' as unknown as Uint8Array), 'ERR_XPWC_INVALID_ARGUMENT');
  });

  it('a 16 KiB name of 0xff bytes decodes (chunked) and round trips', () => {
    const bytes = new Uint8Array(16 * 1024).fill(0xff);
    const name = nameFromBytes(bytes);
    expect(name.length).toBe(bytes.length);
    expect(nameToBytes(name)).toEqual(bytes);
  });
});
