// One test per validation rule of the v2 reader: each file breaks exactly that rule.
import { describe, expect, it } from 'vitest';
import {
  decodeTrailer,
  MAX_ENTRY_COUNT,
  MAX_FILE_SIZE,
  MAX_NAME_LENGTH,
  MAX_TRAILER_BYTES,
  readTrailer,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { ByteWriter, type RawEntry, rawV2File } from './support/raw.js';

const ENTRIES: RawEntry[] = [
  { name: 'fc1.weight', fileOffset: 0, dataSize: 100, seed: 7 },
  { name: 'fc2.weight', fileOffset: 4096, dataSize: 4096, seed: 8 },
];
const valid = (over: Partial<Parameters<typeof rawV2File>[0]> = {}) =>
  rawV2File({ dataLength: 8192, entries: ENTRIES, ...over });

const decode = (bytes: Uint8Array) => decodeTrailer(bytes, bytes.length);

describe('v2: the baseline file is valid', () => {
  it('decodes', () => {
    expect(decode(valid()).entries).toHaveLength(2);
  });
});

describe('v2: ExecuTorch loader checks', () => {
  it('file shorter than magic + version', () => {
    expectError(() => decode(new Uint8Array(7)), 'ERR_XPWC_TRUNCATED', 0);
  });

  it('file shorter than the 20-byte footer', () => {
    const f = new ByteWriter().u32(0).u32(0).u8(0x43, 0x57, 0x50, 0x58).u32(2).toBytes(); // 16 bytes
    expectError(() => decode(f), 'ERR_XPWC_TRUNCATED', 0);
  });

  it('magic mismatch', () => {
    const f = valid({ magic: 0x58505744 });
    expectError(() => decode(f), 'ERR_XPWC_BAD_MAGIC', f.length - 8);
  });

  it('big-endian magic is not accepted (we read little-endian explicitly)', () => {
    const f = valid({ magic: 0x43575058 });
    expectError(() => decode(f), 'ERR_XPWC_BAD_MAGIC');
  });

  it('unknown version', () => {
    for (const version of [0, 4, 0xffffffff]) {
      const f = valid({ version });
      expectError(() => decode(f), 'ERR_XPWC_UNSUPPORTED_VERSION', f.length - 4);
    }
  });

  it('version 1 is stale', () => {
    const f = rawV2File({
      version: 1,
      dataLength: 4096,
      entries: [{ name: 'a', fileOffset: 0, dataSize: 1 }],
    });
    expectError(() => decode(f), 'ERR_XPWC_STALE_V1', f.length - 4);
  });

  it('index_start == size - 20: an empty index (zero entries) is rejected', () => {
    const f = rawV2File({ dataLength: 4096, entries: [] });
    expectError(() => decode(f), 'ERR_XPWC_BAD_INDEX_START', f.length - 20);
  });

  it('index_start beyond the footer', () => {
    expectError(() => decode(valid({ indexStart: 1_000_000 })), 'ERR_XPWC_BAD_INDEX_START');
    expectError(() => decode(valid({ indexStart: 2n ** 64n - 1n })), 'ERR_XPWC_BAD_INDEX_START');
  });

  it('fewer than 4 bytes left for name_len', () => {
    // entry_count says 3; after two entries 2 bytes remain before the footer.
    const f = valid({ entryCount: 3, gap: [0, 0] });
    expectError(() => decode(f), 'ERR_XPWC_TRUNCATED', 8192 + 34 + 34);
  });

  it('name_len + 20 bytes do not fit before the footer', () => {
    const f = valid({
      entries: [ENTRIES[0] as RawEntry, { ...(ENTRIES[1] as RawEntry), nameLen: 20 }],
    });
    expectError(() => decode(f), 'ERR_XPWC_TRUNCATED', 8192 + 34);
  });

  it('file_offset == index_start', () => {
    const f = valid({
      entries: [
        ENTRIES[0] as RawEntry,
        { ...(ENTRIES[1] as RawEntry), fileOffset: 8192, dataSize: 0 },
      ],
    });
    expectError(() => decode(f), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS', 8192 + 34 + 14);
  });

  it('file_offset beyond index_start, including u64 values above 2^53', () => {
    for (const fileOffset of [9000, 2n ** 53n, 2n ** 64n - 1n]) {
      const f = valid({ entries: [{ name: 'x', fileOffset, dataSize: 0 }] });
      expectError(() => decode(f), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    }
  });

  it('data_size > index_start - file_offset', () => {
    const f = valid({ entries: [{ name: 'x', fileOffset: 4096, dataSize: 4097 }] });
    expectError(() => decode(f), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS', 8192 + 5 + 8);
    // ... exactly up to index_start is fine
    expect(
      decode(valid({ entries: [{ name: 'x', fileOffset: 4096, dataSize: 4096 }] })).entries,
    ).toHaveLength(1);
    const huge = valid({ entries: [{ name: 'x', fileOffset: 0, dataSize: 2n ** 64n - 1n }] });
    expectError(() => decode(huge), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
  });

  it('a bad entry rejects the whole file (all-or-nothing), even the last one', () => {
    const f = valid({
      entries: [...ENTRIES, { name: 'bad', fileOffset: 0, dataSize: 9000 }],
    });
    expectError(() => decode(f), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    expectError(() => readTrailer(f, f.length), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
  });
});

describe('v2: our stricter checks', () => {
  it('truncated index: entry_count says more entries than the index holds', () => {
    const f = valid({ entryCount: 3 });
    const err = expectError(() => decode(f), 'ERR_XPWC_TRUNCATED', 8192 + 68);
    expect(err.message).toMatch(/truncated index/);
  });

  it('bytes between the last entry and the footer', () => {
    const f = valid({ gap: [0] });
    expectError(() => decode(f), 'ERR_XPWC_TRAILING_BYTES', 8192 + 68);
  });

  it('entry_count smaller than the entries present (leftover entry = trailing bytes)', () => {
    expectError(() => decode(valid({ entryCount: 1 })), 'ERR_XPWC_TRAILING_BYTES', 8192 + 34);
  });

  it('a name that is not UTF-8 is bytes: decoded losslessly (surrogateescape), not an error', () => {
    const f = valid({ entries: [{ name: [0x66, 0xff, 0x66], fileOffset: 0, dataSize: 1 }] });
    expect(decode(f).entries[0]?.name).toBe('f\uDCFFf');
  });

  it('name_len above MAX_NAME_LENGTH (before reading or allocating it)', () => {
    const name = 'n'.repeat(MAX_NAME_LENGTH + 1);
    const f = valid({ entries: [{ name, fileOffset: 0, dataSize: 1 }] });
    expectError(() => decode(f), 'ERR_XPWC_LIMIT', 8192);
    // exactly MAX_NAME_LENGTH is fine
    const ok = valid({ entries: [{ name: name.slice(1), fileOffset: 0, dataSize: 1 }] });
    expect(decode(ok).entries[0]?.name).toHaveLength(MAX_NAME_LENGTH);
  });

  it('entry_count above MAX_ENTRY_COUNT', () => {
    const f = valid({ entryCount: MAX_ENTRY_COUNT + 1 });
    expectError(() => decode(f), 'ERR_XPWC_LIMIT', f.length - 12);
  });

  it('a trailer larger than MAX_TRAILER_BYTES is refused before it is read', () => {
    const footer = valid().subarray(-20);
    const size = 2 ** 40;
    const f = new ByteWriter()
      .u64(size - 20 - MAX_TRAILER_BYTES - 1)
      .u32(1)
      .bytes(footer.subarray(12))
      .toBytes();
    expectError(() => decodeTrailer(f, size), 'ERR_XPWC_LIMIT');
  });

  it('fileSize above MAX_FILE_SIZE (2^53 - 1)', () => {
    const f = valid();
    expectError(() => decodeTrailer(f, MAX_FILE_SIZE + 1), 'ERR_XPWC_LIMIT');
    expectError(() => decodeTrailer(f, 2n ** 60n), 'ERR_XPWC_LIMIT');
  });

  it('bytes that do not reach back to index_start (caller must read more)', () => {
    const f = valid();
    expectError(() => decodeTrailer(f.subarray(-30), f.length), 'ERR_XPWC_SHORT_INPUT', 8192);
    expectError(
      () => decodeTrailer(f.subarray(-10), f.length),
      'ERR_XPWC_SHORT_INPUT',
      f.length - 20,
    );
  });

  it('invalid arguments', () => {
    const f = valid();
    expectError(() => decodeTrailer(f, f.length - 1), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => decodeTrailer(f, -1), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => decodeTrailer(f, -1n), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => decodeTrailer(f, 1.5), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => decodeTrailer(f, Number.NaN), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => decodeTrailer(f, '100' as unknown as number), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(
      () => decodeTrailer([1, 2] as unknown as Uint8Array, 2),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
  });
});

describe('v2: things that are allowed', () => {
  it('duplicate names are all returned, in file order', () => {
    const f = valid({
      entries: [
        { name: 'w', fileOffset: 0, dataSize: 1, seed: 1 },
        { name: 'w', fileOffset: 4096, dataSize: 2, seed: 2 },
      ],
    });
    expect(decode(f).entries.map((e) => e.seed)).toEqual([1, 2]);
  });

  it('unaligned offsets, empty names, zero-size data', () => {
    const f = valid({ entries: [{ name: '', fileOffset: 17, dataSize: 0 }] });
    expect(decode(f).entries).toEqual([{ name: '', fileOffset: 17, dataSize: 0, seed: 0 }]);
  });

  it('a UTF-8 BOM at the start of a name is kept', () => {
    const f = valid({ entries: [{ name: [0xef, 0xbb, 0xbf, 0x61], fileOffset: 0, dataSize: 0 }] });
    expect(decode(f).entries[0]?.name).toBe('\uFEFFa');
  });

  it('bytes before index_start that no entry references (superseded packs, old trailers)', () => {
    const f = valid({ dataLength: 3 * 4096 });
    expect(decode(f).entries).toHaveLength(2);
  });
});
