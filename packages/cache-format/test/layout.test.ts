// Per-entry packing layout records in v3 (footer flag bit 0).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeTrailer,
  encodeTrailer,
  LAYOUT_FLAG_TRANSPOSED,
  MAX_NAME_LENGTH,
  type PackingLayout,
  readFooter,
  V3_FLAG_ENTRY_LAYOUT,
  V3_FOOTER_FIELDS,
  V3_FOOTER_SIZE,
  V3_HEADER_SIZE,
  type XpwcEntryV3,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { ByteWriter, rawV3Trailer } from './support/raw.js';

const h = (s: string): number[] =>
  s
    .trim()
    .split(/\s+/)
    .map((b) => Number.parseInt(b, 16));

// Written out from the README tables, not produced by the encoder: two entries, the first with
// a layout, the second (a name that is not UTF-8) with the 32 zero bytes of "no layout".
const GOLDEN_INDEX_START = 12288;
const GOLDEN = Uint8Array.from([
  // entry 0: name_len 2 "fc", file_offset 4096, data_size 64, seed 63, fingerprint 0, crc32c
  ...h('02 00 00 00 66 63'),
  ...h('00 10 00 00 00 00 00 00'),
  ...h('40 00 00 00 00 00 00 00'),
  ...h('3f 00 00 00'),
  ...h('00 00 00 00'),
  ...h('44 33 22 11'),
  // layout: operator 63, nc 16, kc 8, nr 8, kr 1, sr 1, extra_bytes 0, flags 1 (transposed)
  ...h('3f 00 00 00 10 00 00 00 08 00 00 00 08 00 00 00'),
  ...h('01 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00'),
  // entry 1: name_len 2, bytes ff fe, file_offset 8192, data_size 4, seed 5, fingerprint 9
  ...h('02 00 00 00 ff fe'),
  ...h('00 20 00 00 00 00 00 00'),
  ...h('04 00 00 00 00 00 00 00'),
  ...h('05 00 00 00'),
  ...h('09 00 00 00'),
  ...h('dd cc bb aa'),
  ...new Array<number>(32).fill(0), // no layout
  ...h('69 64'), // identity "id"
  ...h('00 30 00 00 00 00 00 00'), // index_start 12288
  ...h('02 00 00 00'), // entry_count 2
  ...h('02 00 00 00'), // identity_len 2
  ...h('01 00 00 00 00 00 00 00'), // generation 1
  ...h('00 00 00 00 00 00 00 00'), // prev_trailer_end
  ...h('00 00 00 00 00 00 00 00'), // prev_generation
  ...h('01 00 00 00'), // flags: V3_FLAG_ENTRY_LAYOUT
  ...h('fc 94 ef 77'), // trailer CRC32C 0x77ef94fc
  ...h('43 57 50 58'),
  ...h('03 00 00 00'),
]);
const GOLDEN_LAYOUT: PackingLayout = {
  operatorType: 63,
  outputChannels: 16,
  inputChannels: 8,
  nr: 8,
  kr: 1,
  sr: 1,
  extraBytes: 0,
  flags: LAYOUT_FLAG_TRANSPOSED,
};
const GOLDEN_ENTRIES: XpwcEntryV3[] = [
  {
    name: 'fc',
    fileOffset: 4096,
    dataSize: 64,
    seed: 63,
    fingerprint: 0,
    crc32c: 0x11223344,
    layout: GOLDEN_LAYOUT,
  },
  {
    name: '\uDCFF\uDCFE',
    fileOffset: 8192,
    dataSize: 4,
    seed: 5,
    fingerprint: 9,
    crc32c: 0xaabbccdd,
  },
];
const GOLDEN_END = GOLDEN_INDEX_START + GOLDEN.length;

describe('golden v3 with layout records', () => {
  it('is 190 bytes: two 66-byte entries, identity, 56-byte footer', () => {
    expect(GOLDEN.length).toBe(2 * (32 + 2 + 32) + 2 + V3_FOOTER_SIZE);
  });

  it('decodes to the expected entries; the zero record is "no layout"', () => {
    const t = decodeTrailer(GOLDEN, GOLDEN_END);
    if (t.version !== 3) throw new Error('expected v3');
    expect(t.entries).toEqual(GOLDEN_ENTRIES);
    expect('layout' in (t.entries[1] as XpwcEntryV3)).toBe(false);
    expect(t.columns.layouts).toEqual(GOLDEN_ENTRIES.map((e) => e.layout));
    expect(t.flags).toBe(V3_FLAG_ENTRY_LAYOUT);
    expect(readFooter(GOLDEN, GOLDEN_END)).toMatchObject({ flags: 1, entryCount: 2 });
  });

  it('the encoder reproduces it byte for byte', () => {
    expect(
      encodeTrailer(GOLDEN_ENTRIES, { indexStart: GOLDEN_INDEX_START, identity: 'id' }),
    ).toEqual(GOLDEN);
  });

  it('a flipped layout byte fails the trailer CRC (the CRC covers the records)', () => {
    const copy = GOLDEN.slice();
    copy[6 + 28 + 4] = (copy[6 + 28 + 4] as number) ^ 1; // entry 0, layout.outputChannels
    expectError(() => decodeTrailer(copy, GOLDEN_END), 'ERR_XPWC_CHECKSUM');
  });
});

const E = (over: Partial<XpwcEntryV3> = {}): XpwcEntryV3 => ({
  name: 'w',
  fileOffset: 4096,
  dataSize: 16,
  seed: 1,
  fingerprint: 2,
  crc32c: 3,
  ...over,
});
const AT = 3 * 4096;

describe('mixed entries', () => {
  it('without any layout: flag 0, no records (the bytes earlier versions wrote)', () => {
    const bytes = encodeTrailer([E(), E({ name: 'b' })], { indexStart: AT, identity: 'id' });
    expect(bytes.length).toBe(2 * 33 + 2 + V3_FOOTER_SIZE);
    const t = decodeTrailer(bytes, AT + bytes.length);
    expect(t.version === 3 && t.flags).toBe(0);
  });

  it('with and without layouts: each entry keeps what it had', () => {
    const entries = [E(), E({ name: 'l', layout: GOLDEN_LAYOUT }), E({ name: 'z' })];
    const bytes = encodeTrailer(entries, { indexStart: AT, identity: 'id' });
    expect(bytes.length).toBe(3 * (33 + 32) + 2 + V3_FOOTER_SIZE);
    const t = decodeTrailer(bytes, AT + bytes.length);
    expect(t.entries).toEqual(entries);
    expect(t.entries.map((e) => 'layout' in e)).toEqual([false, true, false]);
  });

  it('the encoder refuses a layout that cannot round trip', () => {
    const enc = (layout: unknown) => () =>
      encodeTrailer([E({ layout: layout as PackingLayout })], { indexStart: AT, identity: 'i' });
    expectError(enc({ ...GOLDEN_LAYOUT, nr: -1 }), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(enc({ ...GOLDEN_LAYOUT, kr: 2 ** 32 }), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(enc({ ...GOLDEN_LAYOUT, sr: 1.5 }), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(enc({ operatorType: 63 }), 'ERR_XPWC_INVALID_ARGUMENT');
    const zero = { ...GOLDEN_LAYOUT, operatorType: 0, outputChannels: 0, inputChannels: 0 };
    expectError(enc({ ...zero, nr: 0, kr: 0, sr: 0, flags: 0 }), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(enc(7), 'ERR_XPWC_INVALID_ARGUMENT');
  });
});

describe('flag set but records missing or cut', () => {
  const entries = [{ name: 'w', fileOffset: 4096, dataSize: 16 }];

  it('entries without records under the flag: truncated at the entry', () => {
    const bytes = rawV3Trailer({ entries, indexStart: AT, identity: 'id', flags: 1 });
    expectError(() => decodeTrailer(bytes, AT + bytes.length), 'ERR_XPWC_TRUNCATED', AT);
  });

  it('a record cut short by 4 bytes: truncated', () => {
    // The layout record is written as extra entry bytes ("gap"), 28 of its 32 bytes.
    const gap = Array.from(
      new ByteWriter().u32(63).u32(16).u32(8).u32(8).u32(1).u32(1).u32(0).toBytes(),
    );
    const bytes = rawV3Trailer({ entries, indexStart: AT, identity: 'id', flags: 1, gap });
    expectError(() => decodeTrailer(bytes, AT + bytes.length), 'ERR_XPWC_TRUNCATED', AT);
  });

  it('a whole record, flag set: decodes; the same bytes without the flag: trailing bytes', () => {
    const record = new ByteWriter().u32(63).u32(16).u32(8).u32(8).u32(1).u32(1).u32(0).u32(1);
    const gap = Array.from(record.toBytes());
    const ok = rawV3Trailer({ entries, indexStart: AT, identity: 'id', flags: 1, gap });
    expect(decodeTrailer(ok, AT + ok.length).entries[0]).toMatchObject({ layout: GOLDEN_LAYOUT });
    const bad = rawV3Trailer({ entries, indexStart: AT, identity: 'id', flags: 0, gap });
    expectError(() => decodeTrailer(bad, AT + bad.length), 'ERR_XPWC_TRAILING_BYTES', AT + 33);
  });

  it('limits are still checked before anything is read or allocated', () => {
    const huge = [{ ...entries[0], name: 'x', nameLen: MAX_NAME_LENGTH + 1 }];
    const bytes = rawV3Trailer({
      entries: huge as never,
      indexStart: AT,
      identity: 'id',
      flags: 1,
    });
    expectError(() => decodeTrailer(bytes, AT + bytes.length), 'ERR_XPWC_LIMIT', AT);
    const big = rawV3Trailer({
      entries,
      indexStart: AT,
      identity: 'id',
      flags: 1,
      entryCount: 2e6,
    });
    expectError(
      () => decodeTrailer(big, AT + big.length),
      'ERR_XPWC_LIMIT',
      AT + big.length - V3_FOOTER_SIZE + V3_FOOTER_FIELDS.entryCount,
    );
  });
});

const u32 = fc.nat({ max: 0xffff_ffff });
const layoutArb = fc
  .record({
    operatorType: u32,
    outputChannels: u32,
    inputChannels: u32,
    nr: u32,
    kr: u32,
    sr: u32,
    extraBytes: u32,
    flags: u32,
  })
  .filter((l) => Object.values(l).some((v) => v !== 0));

describe('round trip with layouts', () => {
  it('decode(encode(entries)) == entries and encode(decode(bytes)) == bytes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.string({ maxLength: 12 }),
            at: fc.nat({ max: 100 }),
            size: fc.nat({ max: 4096 }),
            seed: u32,
            fingerprint: u32,
            crc32c: u32,
            layout: fc.option(layoutArb, { nil: undefined }),
          }),
          { maxLength: 20 },
        ),
        (raw) => {
          const indexStart = V3_HEADER_SIZE + 101 * 4096;
          const entries: XpwcEntryV3[] = raw.map(({ at, size, layout, ...rest }) => ({
            ...rest,
            fileOffset: V3_HEADER_SIZE + at * 4096,
            dataSize: size,
            ...(layout === undefined ? {} : { layout }),
          }));
          const bytes = encodeTrailer(entries, { indexStart, identity: 'prop' });
          const t = decodeTrailer(bytes, indexStart + bytes.length);
          expect(t.entries).toEqual(entries);
          const flagged = entries.some((e) => e.layout !== undefined);
          expect(t.version === 3 && t.flags).toBe(flagged ? V3_FLAG_ENTRY_LAYOUT : 0);
          expect(
            encodeTrailer(t.entries as XpwcEntryV3[], { indexStart, identity: 'prop' }),
          ).toEqual(bytes);
        },
      ),
      { numRuns: 300 },
    );
  });
});
