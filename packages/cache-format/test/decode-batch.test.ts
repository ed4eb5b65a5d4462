// The decoder's whole-index paths: ASCII names sliced from one decode, equal layouts shared.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeTrailer,
  encodeTrailer,
  nameFromBytes,
  nameToBytes,
  type PackingLayout,
  type TrailerV3,
  V3_HEADER_SIZE,
  type XpwcEntryV3,
} from '../src/index.js';

const PAGE = 4096;
const FC: PackingLayout = {
  operatorType: 63,
  outputChannels: 64,
  inputChannels: 64,
  nr: 8,
  kr: 1,
  sr: 1,
  extraBytes: 0,
  flags: 0,
};

function encodeDecode(entries: XpwcEntryV3[]): TrailerV3 {
  const indexStart = V3_HEADER_SIZE + entries.length * PAGE;
  const bytes = encodeTrailer(entries, { indexStart, identity: 'test' });
  return decodeTrailer(bytes, indexStart + bytes.length) as TrailerV3;
}

function entry(i: number, name: string, layout?: PackingLayout): XpwcEntryV3 {
  const base = { name, fileOffset: V3_HEADER_SIZE + i * PAGE, dataSize: 16, seed: i };
  const e = { ...base, fingerprint: 7, crc32c: i };
  return layout === undefined ? e : { ...e, layout };
}

describe('decoding a whole index', () => {
  it('decodes ASCII, UTF-8 and non-UTF-8 names mixed in one index to their own text', () => {
    const names = [
      'fc1.weight',
      'poids.été',
      nameFromBytes(Uint8Array.from([0x66, 0xff, 0x80])),
      '',
      'a'.repeat(131),
      'x\u{1f600}y',
      'last',
    ];
    const decoded = encodeDecode(names.map((n, i) => entry(i, n)));
    expect(decoded.entries.map((e) => e.name)).toEqual(names);
    for (const e of decoded.entries) expect(nameFromBytes(nameToBytes(e.name))).toBe(e.name);
  });

  it('round-trips any names (ASCII runs, other bytes) in any order', () => {
    const nameBytes = fc.uint8Array({ maxLength: 24 }).map((b) => nameFromBytes(b));
    const ascii = fc.string({ maxLength: 40, unit: 'binary-ascii' });
    fc.assert(
      fc.property(fc.array(fc.oneof(nameBytes, ascii), { minLength: 1, maxLength: 12 }), (ns) => {
        const decoded = encodeDecode(ns.map((n, i) => entry(i, n)));
        expect(decoded.entries.map((e) => e.name)).toEqual(ns);
      }),
      { numRuns: 200 },
    );
  });

  it('gives equal consecutive layouts one frozen object and keeps different ones apart', () => {
    const other = { ...FC, outputChannels: 128 };
    const decoded = encodeDecode([
      entry(0, 'a', FC),
      entry(1, 'b', { ...FC }),
      entry(2, 'c'),
      entry(3, 'd', FC),
      entry(4, 'e', other),
    ]);
    const [a, b, c, d, e] = decoded.entries;
    expect(a?.layout).toEqual(FC);
    expect(b?.layout).toBe(a?.layout);
    expect(c).not.toHaveProperty('layout');
    expect(d?.layout).toBe(a?.layout);
    expect(e?.layout).toEqual(other);
    expect(e?.layout).not.toBe(a?.layout);
    expect(Object.isFrozen(a?.layout)).toBe(true);
  });
});
