import { describe, expect, it } from 'vitest';
import {
  alignUp,
  crc32cOf,
  DEFAULT_PAGE_SIZE,
  decodeTrailer,
  encodeTrailer,
  entriesByName,
  entryDataMatches,
  findDuplicateNames,
  isXpwcFormatError,
  lintTrailer,
  MAGIC,
  MAX_ENTRY_COUNT,
  MAX_FILE_SIZE,
  MAX_IDENTITY_LENGTH,
  MAX_NAME_LENGTH,
  readFooter,
  V3_HEADER_SIZE,
  VERSION_1,
  VERSION_2,
  VERSION_3,
  verifyEntryData,
  XPWC_ERROR_CODES,
  type XpwcEntryV2,
  type XpwcErrorCode,
  XpwcFormatError,
} from '../src/index.js';

function codeOf(f: () => unknown): XpwcErrorCode | 'none' | 'foreign' {
  try {
    f();
    return 'none';
  } catch (e) {
    return e instanceof XpwcFormatError ? e.code : 'foreign';
  }
}

describe('constants', () => {
  it('match the spec', () => {
    expect(MAGIC).toBe(0x58505743);
    expect([VERSION_1, VERSION_2, VERSION_3]).toEqual([1, 2, 3]);
    expect(DEFAULT_PAGE_SIZE).toBe(4096);
    expect(MAX_FILE_SIZE).toBe(2 ** 53 - 1);
    expect(new Set(XPWC_ERROR_CODES).size).toBe(XPWC_ERROR_CODES.length);
  });
});

describe('XpwcFormatError', () => {
  it('carries code, offset and name', () => {
    const e = new XpwcFormatError('ERR_XPWC_CHECKSUM', 'bad', 42);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('XpwcFormatError');
    expect(e.code).toBe('ERR_XPWC_CHECKSUM');
    expect(e.offset).toBe(42);
    expect(e.message).toContain('42');
    expect(isXpwcFormatError(e, 'ERR_XPWC_CHECKSUM')).toBe(true);
    expect(isXpwcFormatError(e, 'ERR_XPWC_LIMIT')).toBe(false);
    expect(new XpwcFormatError('ERR_XPWC_LIMIT', 'x').offset).toBe(-1);
  });
});

describe('alignUp', () => {
  it('rounds up to the page', () => {
    expect(alignUp(0, 4096)).toBe(0);
    expect(alignUp(1, 4096)).toBe(4096);
    expect(alignUp(4096, 4096)).toBe(4096);
    expect(alignUp(4097, 16384)).toBe(16384);
    expect(alignUp(2 ** 40 + 1, 4096)).toBe(2 ** 40 + 4096);
    expect(alignUp(MAX_FILE_SIZE - 4095, 1)).toBe(MAX_FILE_SIZE - 4095);
  });

  it('rejects bad input and results beyond MAX_FILE_SIZE', () => {
    expect(codeOf(() => alignUp(MAX_FILE_SIZE - 10, 4096))).toBe('ERR_XPWC_LIMIT');
    expect(codeOf(() => alignUp(-1, 4096))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(() => alignUp(1.5, 4096))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(() => alignUp(1, 3000))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(() => alignUp(1, 0))).toBe('ERR_XPWC_INVALID_ARGUMENT');
  });
});

describe('crc32cOf / verifyEntryData', () => {
  it('is CRC32C (check value of "123456789" is 0xe3069283) and chains', () => {
    const bytes = new TextEncoder().encode('123456789');
    expect(crc32cOf(bytes)).toBe(0xe3069283);
    expect(crc32cOf(bytes.subarray(4), crc32cOf(bytes.subarray(0, 4)))).toBe(0xe3069283);
    expect(crc32cOf(new Uint8Array(0))).toBe(0);
  });

  it('verifies entry data', () => {
    const data = Uint8Array.from([1, 2, 3, 4, 5]);
    const entry = {
      name: 'w',
      fileOffset: 8192,
      dataSize: 4,
      crc32c: crc32cOf(data.subarray(0, 4)),
    };
    expect(entryDataMatches(entry, data)).toBe(true); // page padding after dataSize is ignored
    expect(() => verifyEntryData(entry, data.subarray(0, 4))).not.toThrow();
    const flipped = data.slice();
    flipped[2] = 9;
    expect(entryDataMatches(entry, flipped)).toBe(false);
    let err: unknown;
    try {
      verifyEntryData(entry, flipped);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'ERR_XPWC_CHECKSUM', offset: 8192 });
    expect(entryDataMatches(entry, data.subarray(0, 3))).toBe(false);
    expect(codeOf(() => verifyEntryData(entry, data.subarray(0, 3)))).toBe('ERR_XPWC_TRUNCATED');
    const v2Entry = { name: 'w', fileOffset: 0, dataSize: 4, seed: 0 };
    expect(codeOf(() => verifyEntryData(v2Entry as never, data))).toBe('ERR_XPWC_INVALID_ARGUMENT');
  });
});

describe('readFooter', () => {
  const trailer = encodeTrailer([{ name: 'a', fileOffset: 0, dataSize: 1, seed: 0 }], {
    version: 2,
    indexStart: 4096,
  });

  it('without fileSize: offsets relative to the tail, index_start not checked', () => {
    expect(readFooter(trailer.subarray(-20))).toMatchObject({
      version: 2,
      indexStart: 4096,
      footerOffset: 0,
    });
  });

  it('needs the 8 tail bytes, then the whole footer', () => {
    expect(codeOf(() => readFooter(trailer.subarray(-7)))).toBe('ERR_XPWC_SHORT_INPUT');
    expect(codeOf(() => readFooter(trailer.subarray(-19)))).toBe('ERR_XPWC_SHORT_INPUT');
    expect(codeOf(() => readFooter(trailer.subarray(-20), 10))).toBe('ERR_XPWC_INVALID_ARGUMENT');
  });

  it('with fileSize: checks index_start', () => {
    expect(codeOf(() => readFooter(trailer.subarray(-20), 100))).toBe('ERR_XPWC_BAD_INDEX_START');
    expect(readFooter(trailer, 4096 + trailer.length).footerOffset).toBe(
      4096 + trailer.length - 20,
    );
  });

  it('reads a v3 footer', () => {
    const t3 = encodeTrailer([], {
      indexStart: 8192,
      identity: 'x',
      generation: 3,
      prevGeneration: 2,
      prevTrailerEnd: 8000,
    });
    expect(readFooter(t3, 8192 + t3.length)).toMatchObject({
      version: 3,
      footerSize: 56,
      indexStart: 8192,
      entryCount: 0,
      identityLength: 1,
      generation: 3,
      prevGeneration: 2,
      prevTrailerEnd: 8000,
      flags: 0,
    });
  });
});

describe('encodeTrailer validation', () => {
  const e2 = (over: Partial<XpwcEntryV2> = {}): XpwcEntryV2 => ({
    name: 'w',
    fileOffset: 0,
    dataSize: 1,
    seed: 0,
    ...over,
  });
  const e3 = (over = {}) => ({
    ...e2({ fileOffset: V3_HEADER_SIZE }),
    fingerprint: 0,
    crc32c: 0,
    ...over,
  });
  const v2 =
    (entries: XpwcEntryV2[], indexStart = 4096) =>
    () =>
      encodeTrailer(entries, { version: 2, indexStart });
  const v3 =
    (entries: ReturnType<typeof e3>[], over = {}) =>
    () =>
      encodeTrailer(entries, { indexStart: 8192, identity: 'id', ...over });

  it('refuses what the decoder would reject', () => {
    expect(codeOf(v2([]))).toBe('ERR_XPWC_INVALID_ARGUMENT'); // empty v2 index
    expect(codeOf(v2([e2({ fileOffset: 4096 })]))).toBe('ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    expect(codeOf(v2([e2({ dataSize: 4097 })]))).toBe('ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    expect(codeOf(v2([e2({ name: 'x'.repeat(MAX_NAME_LENGTH + 1) })]))).toBe('ERR_XPWC_LIMIT');
    expect(codeOf(v2([e2({ name: 'é'.repeat(MAX_NAME_LENGTH / 2 + 1) })]))).toBe('ERR_XPWC_LIMIT');
    expect(codeOf(v2([e2({ name: 'a\uD800b' })]))).toBe('ERR_XPWC_INVALID_ARGUMENT'); // lone surrogate
    expect(codeOf(v2([e2({ seed: -1 })]))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v2([e2({ seed: 2 ** 32 })]))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v2([e2({ fileOffset: 0.5 })]))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v2([e2()], MAX_FILE_SIZE))).toBe('ERR_XPWC_LIMIT');
    expect(codeOf(v3([e3({ fileOffset: 100 })]))).toBe('ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    expect(codeOf(v3([e3({ crc32c: 2 ** 32 })]))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([e3({ fingerprint: 'x' })]))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([], { identity: 'i'.repeat(MAX_IDENTITY_LENGTH + 1) }))).toBe(
      'ERR_XPWC_LIMIT',
    );
    expect(codeOf(v3([], { identity: 5 }))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([], { indexStart: 100 }))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([], { generation: 0 }))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([], { generation: 2, prevGeneration: 1 }))).toBe('ERR_XPWC_INVALID_ARGUMENT');
    expect(codeOf(v3([], { generation: 2, prevGeneration: 2, prevTrailerEnd: 5000 }))).toBe(
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expect(codeOf(v3([], { generation: 2, prevGeneration: 1, prevTrailerEnd: 9000 }))).toBe(
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expect(codeOf(() => encodeTrailer([], { version: 1 as 2, indexStart: 10 }))).toBe(
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expect(codeOf(() => encodeTrailer(null as never, { version: 2, indexStart: 10 }))).toBe(
      'ERR_XPWC_INVALID_ARGUMENT',
    );
  });

  it('refuses more than MAX_ENTRY_COUNT entries before encoding any', () => {
    const many = new Array(MAX_ENTRY_COUNT + 1);
    expect(codeOf(v2(many))).toBe('ERR_XPWC_LIMIT');
  });

  it('defaults to version 3, generation 1', () => {
    const bytes = encodeTrailer([e3()], { indexStart: 8192, identity: 'id' });
    const t = decodeTrailer(bytes, 8192 + bytes.length);
    expect(t).toMatchObject({ version: 3, generation: 1, prevGeneration: 0 });
  });
});

describe('lint helpers', () => {
  const entries: XpwcEntryV2[] = [
    { name: 'a', fileOffset: 0, dataSize: 100, seed: 1 },
    { name: 'b', fileOffset: 4096, dataSize: 5000, seed: 2 },
    { name: 'a', fileOffset: 12288, dataSize: 10, seed: 3 },
    { name: 'c', fileOffset: 8200, dataSize: 10, seed: 4 }, // unaligned, overlaps b
    { name: 'a', fileOffset: 16384, dataSize: 0, seed: 5 },
  ];

  it('findDuplicateNames lists every index of each duplicated name', () => {
    expect(findDuplicateNames(entries)).toEqual([{ name: 'a', indices: [0, 2, 4] }]);
    expect(findDuplicateNames([])).toEqual([]);
  });

  it('entriesByName keeps the last entry of a name (ExecuTorch semantics)', () => {
    expect(entriesByName(entries).get('a')?.seed).toBe(5);
  });

  it('lintTrailer reports duplicates, unaligned offsets and overlaps', () => {
    const w = lintTrailer(entries, 4096);
    expect(w.map((x) => [x.code, x.entryIndex])).toEqual([
      ['WARN_XPWC_DUPLICATE_NAME', 0],
      ['WARN_XPWC_DUPLICATE_NAME', 2],
      ['WARN_XPWC_UNALIGNED_OFFSET', 3],
      ['WARN_XPWC_OVERLAPPING_DATA', 3],
    ]);
    expect(lintTrailer(entries, 8).filter((x) => x.code === 'WARN_XPWC_UNALIGNED_OFFSET')).toEqual(
      [],
    );
    expect(codeOf(() => lintTrailer(entries, 1000))).toBe('ERR_XPWC_INVALID_ARGUMENT');
  });

  it('a clean trailer has no warnings (accepts a decoded trailer)', () => {
    const t = encodeTrailer([entries[0] as XpwcEntryV2, entries[1] as XpwcEntryV2], {
      version: 2,
      indexStart: 12288,
    });
    expect(lintTrailer(decodeTrailer(t, 12288 + t.length))).toEqual([]);
  });
});
