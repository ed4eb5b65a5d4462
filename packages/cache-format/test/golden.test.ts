// Golden vectors written out byte by byte from the format tables (README), not produced by the
// encoder. They pin the on-disk layout: decoding them gives the expected entries, and the
// encoder must reproduce them exactly.
import { describe, expect, it } from 'vitest';
import {
  commitSlotForTrailer,
  decodeHeader,
  decodeTrailer,
  type EntryColumns,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  readCommittedTrailer,
  readFooter,
  readTrailer,
  verifyEntryData,
  type XpwcEntryV2,
  type XpwcEntryV3,
  XpwcFormatError,
} from '../src/index.js';

const h = (s: string): number[] =>
  s
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((b) => Number.parseInt(b, 16));
const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

// A complete 16 KiB v2 file: 16384 bytes of packed data (three regions), then the trailer.
const V2_TRAILER = Uint8Array.from([
  // entry 0: name_len=10, "fc1.weight", file_offset=0, data_size=100, seed=0x12345678
  ...h('0a 00 00 00'),
  ...ascii('fc1.weight'),
  ...h('00 00 00 00 00 00 00 00'),
  ...h('64 00 00 00 00 00 00 00'),
  ...h('78 56 34 12'),
  // entry 1: name_len=18, "fc1.weightfc1.bias", file_offset=4096, data_size=5000, seed=0xdeadbeef
  ...h('12 00 00 00'),
  ...ascii('fc1.weightfc1.bias'),
  ...h('00 10 00 00 00 00 00 00'),
  ...h('88 13 00 00 00 00 00 00'),
  ...h('ef be ad de'),
  // entry 2: name_len=6, "émbed" (é = c3 a9), file_offset=12288, data_size=4096, seed=1
  ...h('06 00 00 00'),
  ...h('c3 a9'),
  ...ascii('mbed'),
  ...h('00 30 00 00 00 00 00 00'),
  ...h('00 10 00 00 00 00 00 00'),
  ...h('01 00 00 00'),
  // footer: index_start=16384, entry_count=3, magic "XPWC" (43 57 50 58), version=2
  ...h('00 40 00 00 00 00 00 00'),
  ...h('03 00 00 00'),
  ...h('43 57 50 58'),
  ...h('02 00 00 00'),
]);
const V2_INDEX_START = 16384;
const V2_FILE = new Uint8Array(V2_INDEX_START + V2_TRAILER.length);
V2_FILE.set(V2_TRAILER, V2_INDEX_START);
const V2_ENTRIES = [
  { name: 'fc1.weight', fileOffset: 0, dataSize: 100, seed: 0x12345678 },
  { name: 'fc1.weightfc1.bias', fileOffset: 4096, dataSize: 5000, seed: 0xdeadbeef },
  { name: 'émbed', fileOffset: 12288, dataSize: 4096, seed: 1 },
];

// The trailer of a file larger than 4 GiB: offsets need the high u32 word.
const V2_BIG_TRAILER = Uint8Array.from([
  ...h('03 00 00 00'),
  ...ascii('big'),
  ...h('00 00 00 00 01 00 00 00'), // file_offset = 2^32
  ...h('00 10 00 00 00 00 00 00'), // data_size = 4096
  ...h('ff ff ff ff'), // seed = 0xffffffff
  ...h('00 20 00 00 01 00 00 00'), // index_start = 2^32 + 8192
  ...h('01 00 00 00'),
  ...h('43 57 50 58'),
  ...h('02 00 00 00'),
]);
const V2_BIG_INDEX_START = 2 ** 32 + 8192;

describe('golden v2 (ExecuTorch XNNWeightsCache format)', () => {
  it('is 126 trailer bytes: 3 entries and a 20-byte footer', () => {
    expect(V2_TRAILER.length).toBe(34 + 42 + 30 + 20);
  });

  it('decodes to the expected entries', () => {
    const t = decodeTrailer(V2_FILE, V2_FILE.length);
    expect(t).toEqual({
      version: 2,
      indexStart: V2_INDEX_START,
      trailerEnd: V2_FILE.length,
      entries: V2_ENTRIES,
      columns: expectedColumns(V2_ENTRIES),
      identity: null,
      tolerated: [],
    });
  });

  it('decodes from just the trailer bytes (a suffix of the file)', () => {
    expect(decodeTrailer(V2_TRAILER, V2_FILE.length).entries).toEqual(V2_ENTRIES);
    expect(decodeTrailer(V2_TRAILER, BigInt(V2_FILE.length)).entries).toEqual(V2_ENTRIES);
  });

  it('the encoder reproduces it byte for byte', () => {
    expect(encodeTrailer(V2_ENTRIES, { version: 2, indexStart: V2_INDEX_START })).toEqual(
      V2_TRAILER,
    );
  });

  it('readFooter and readTrailer agree', () => {
    expect(readFooter(V2_FILE.subarray(-56), V2_FILE.length)).toEqual({
      version: 2,
      footerSize: 20,
      footerOffset: V2_FILE.length - 20,
      indexStart: V2_INDEX_START,
      entryCount: 3,
    });
    const loaded = readTrailer((o, l) => V2_FILE.subarray(o, o + l), V2_FILE.length);
    expect(loaded.commit).toBeNull();
    expect(loaded.trailer.entries).toEqual(V2_ENTRIES);
  });

  it('handles offsets above 4 GiB (u64 high word)', () => {
    const size = V2_BIG_INDEX_START + V2_BIG_TRAILER.length;
    const t = decodeTrailer(V2_BIG_TRAILER, size);
    expect(t.entries).toEqual([
      { name: 'big', fileOffset: 2 ** 32, dataSize: 4096, seed: 0xffffffff },
    ]);
    expect(encodeTrailer(t.entries, { version: 2, indexStart: V2_BIG_INDEX_START })).toEqual(
      V2_BIG_TRAILER,
    );
  });

  it('a v1 file (same layout without seed) is reported stale, never loaded as seed 0', () => {
    const v1 = Uint8Array.from([
      ...new Array(4096).fill(0),
      ...h('03 00 00 00'),
      ...ascii('old'),
      ...h('00 00 00 00 00 00 00 00'),
      ...h('10 00 00 00 00 00 00 00'),
      ...h('00 10 00 00 00 00 00 00'),
      ...h('01 00 00 00'),
      ...h('43 57 50 58'),
      ...h('01 00 00 00'),
    ]);
    for (const f of [
      () => decodeTrailer(v1, v1.length),
      () => readFooter(v1),
      () => readTrailer(v1, v1.length),
    ]) {
      expect(f).toThrow(
        expect.objectContaining({ code: 'ERR_XPWC_STALE_V1', offset: v1.length - 4 }),
      );
    }
  });
});

// A complete v3 file: header page, one 4-byte data region at 4096, trailer at 8192,
// committed through slot 0.
const V3_HEADER_FIXED = Uint8Array.from([
  ...h('43 57 50 58'), // magic
  ...h('03 00 00 00'), // version 3
  ...h('00 10 00 00'), // header_size 4096
  ...h('00 10 00 00'), // page_size 4096
  ...h('00 00 00 00'), // flags
  ...h('00 00 00 00 00 00 00 00'), // reserved
  ...h('08 01 b7 13'), // header CRC32C of the 28 bytes above = 0x13b70108
]);
const V3_DATA = Uint8Array.from(h('de ad be ef')); // CRC32C 0xf1dc778e
const V3_TRAILER = Uint8Array.from([
  // entry: name_len=1 "w", file_offset=4096, data_size=4, seed=42, fingerprint=7, crc32c
  ...h('01 00 00 00'),
  ...ascii('w'),
  ...h('00 10 00 00 00 00 00 00'),
  ...h('04 00 00 00 00 00 00 00'),
  ...h('2a 00 00 00'),
  ...h('07 00 00 00'),
  ...h('8e 77 dc f1'),
  // identity (17 bytes)
  ...ascii('xnnpack-test/avx2'),
  // footer (56 bytes)
  ...h('00 20 00 00 00 00 00 00'), // index_start 8192
  ...h('01 00 00 00'), // entry_count
  ...h('11 00 00 00'), // identity_len 17
  ...h('01 00 00 00 00 00 00 00'), // generation 1
  ...h('00 00 00 00 00 00 00 00'), // prev_trailer_end (none)
  ...h('00 00 00 00 00 00 00 00'), // prev_generation (none)
  ...h('00 00 00 00'), // flags
  ...h('59 8d 73 b5'), // trailer CRC32C 0xb5738d59 over [index_start, this field)
  ...h('43 57 50 58'), // magic
  ...h('03 00 00 00'), // version 3
]);
const V3_SLOT0 = Uint8Array.from([
  ...h('01 00 00 00 00 00 00 00'), // generation 1
  ...h('00 20 00 00 00 00 00 00'), // trailer_offset 8192
  ...h('6a 00 00 00'), // trailer_length 106
  ...h('59 8d 73 b5'), // trailer_crc32c (copy of the footer's)
  ...h('00 00 00 00'), // slot_index 0
  ...h('82 97 6f 31'), // slot CRC32C 0x316f9782 of the 28 bytes above
]);
const V3_FILE = new Uint8Array(8192 + V3_TRAILER.length);
V3_FILE.set(V3_HEADER_FIXED, 0);
V3_FILE.set(V3_SLOT0, 512);
V3_FILE.set(V3_DATA, 4096);
V3_FILE.set(V3_TRAILER, 8192);
const V3_ENTRY = {
  name: 'w',
  fileOffset: 4096,
  dataSize: 4,
  seed: 42,
  fingerprint: 7,
  crc32c: 0xf1dc778e,
};

describe('golden v3 (ours)', () => {
  it('decodes the trailer', () => {
    expect(
      decodeTrailer(V3_FILE, V3_FILE.length, { expectedIdentity: 'xnnpack-test/avx2' }),
    ).toEqual({
      version: 3,
      indexStart: 8192,
      trailerEnd: 8192 + 106,
      entries: [V3_ENTRY],
      columns: expectedColumns([V3_ENTRY]),
      identity: 'xnnpack-test/avx2',
      generation: 1,
      prevTrailerEnd: 0,
      prevGeneration: 0,
      trailerCrc32c: 0xb5738d59,
      flags: 0,
    });
  });

  it('the encoders reproduce header, slot and trailer byte for byte', () => {
    const trailer = encodeTrailer([V3_ENTRY], { indexStart: 8192, identity: 'xnnpack-test/avx2' });
    expect(trailer).toEqual(V3_TRAILER);
    expect(encodeCommitSlot(commitSlotForTrailer(trailer), 0)).toEqual(V3_SLOT0);
    const header = encodeHeader({ pageSize: 4096 });
    expect(header.length).toBe(4096);
    expect(header.subarray(0, 32)).toEqual(V3_HEADER_FIXED);
    expect(header.subarray(32).every((b) => b === 0)).toBe(true);
  });

  it('is read through its commit slot, and the entry data verifies', () => {
    const c = readCommittedTrailer(V3_FILE, V3_FILE.length);
    expect(c.slotIndex).toBe(0);
    expect(c.trailer.entries).toEqual([V3_ENTRY]);
    expect(c.deadTailBytes).toBe(0);
    expect(c.fellBack).toBe(false);
    expect(decodeHeader(V3_FILE).slots[1]).toEqual({ status: 'empty', index: 1 });
    expect(() => verifyEntryData(V3_ENTRY, V3_FILE.subarray(4096, 4100))).not.toThrow();
  });

  it('rejects another identity', () => {
    expect(() =>
      readTrailer(V3_FILE, V3_FILE.length, { expectedIdentity: 'xnnpack-test/neon' }),
    ).toThrow(XpwcFormatError);
  });
});

/** The columns a decoder gives for `entries` (v3 when the entries carry a crc32c). */
function expectedColumns(entries: readonly (XpwcEntryV2 | XpwcEntryV3)[]): EntryColumns {
  const v3 = entries.every((e) => 'crc32c' in e);
  const withLayout = entries.some((e) => (e as XpwcEntryV3).layout !== undefined);
  return {
    length: entries.length,
    names: entries.map((e) => e.name),
    fileOffsets: Float64Array.from(entries, (e) => e.fileOffset),
    dataSizes: Float64Array.from(entries, (e) => e.dataSize),
    seeds: Uint32Array.from(entries, (e) => e.seed),
    fingerprints: v3 ? Uint32Array.from(entries, (e) => (e as XpwcEntryV3).fingerprint) : null,
    crc32cs: v3 ? Uint32Array.from(entries, (e) => (e as XpwcEntryV3).crc32c) : null,
    layouts: withLayout ? entries.map((e) => (e as XpwcEntryV3).layout) : null,
  };
}
