// One test per validation rule of the v3 trailer reader. Trailers are built by hand with a
// correct CRC (unless the CRC is the rule under test), so each breaks exactly one rule.
import { describe, expect, it } from 'vitest';
import {
  crc32cOf,
  decodeTrailer,
  encodeTrailer,
  MAX_ENTRY_COUNT,
  MAX_IDENTITY_LENGTH,
  MAX_NAME_LENGTH,
  V3_FOOTER_SIZE,
  V3_HEADER_SIZE,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { type RawEntry, type RawV3Options, rawV3Trailer } from './support/raw.js';

const AT = 3 * 4096; // index_start of the test trailers
const ENTRIES: RawEntry[] = [
  { name: 'a', fileOffset: 4096, dataSize: 10, seed: 1, fingerprint: 2, crc32c: 3 },
  { name: 'b', fileOffset: 8192, dataSize: 4096, seed: 4, fingerprint: 5, crc32c: 6 },
];
const ENTRY_BYTES = 2 * (32 + 1);

function trailer(over: Partial<RawV3Options> = {}): { bytes: Uint8Array; end: number } {
  const bytes = rawV3Trailer({ entries: ENTRIES, indexStart: AT, identity: 'id', ...over });
  return { bytes, end: AT + bytes.length };
}

function decode(over: Partial<RawV3Options> = {}, expectedIdentity?: string) {
  const { bytes, end } = trailer(over);
  return decodeTrailer(bytes, end, expectedIdentity === undefined ? {} : { expectedIdentity });
}

const footerAt = (over: Partial<RawV3Options> = {}) => trailer(over).end - V3_FOOTER_SIZE;

describe('v3 trailer', () => {
  it('the baseline trailer is valid', () => {
    const t = decode({}, 'id');
    expect(t.version).toBe(3);
    expect(t.entries).toEqual([
      { name: 'a', fileOffset: 4096, dataSize: 10, seed: 1, fingerprint: 2, crc32c: 3 },
      { name: 'b', fileOffset: 8192, dataSize: 4096, seed: 4, fingerprint: 5, crc32c: 6 },
    ]);
    expect(t.identity).toBe('id');
  });

  it('a trailer that ends before header + footer', () => {
    const { bytes } = trailer();
    expectError(
      () => decodeTrailer(bytes.subarray(-56), V3_HEADER_SIZE + V3_FOOTER_SIZE - 1),
      'ERR_XPWC_TRUNCATED',
      0,
    );
  });

  it('index_start inside the header', () => {
    const { bytes } = trailer({ indexStartField: V3_HEADER_SIZE - 1 });
    // bytes do not reach back that far, but the range check comes first
    expectError(
      () => decodeTrailer(bytes, AT + bytes.length),
      'ERR_XPWC_BAD_INDEX_START',
      footerAt(),
    );
  });

  it('index_start after the footer start', () => {
    const { bytes, end } = trailer({ indexStartField: AT + 10_000 });
    expectError(() => decodeTrailer(bytes, end), 'ERR_XPWC_BAD_INDEX_START');
    const { bytes: b2, end: e2 } = trailer({ indexStartField: 2n ** 64n - 1n });
    expectError(() => decodeTrailer(b2, e2), 'ERR_XPWC_BAD_INDEX_START');
  });

  it('trailer CRC mismatch (one flipped bit anywhere in index or identity)', () => {
    const { bytes, end } = trailer();
    for (const at of [0, 5, ENTRY_BYTES, bytes.length - V3_FOOTER_SIZE + 20]) {
      const copy = bytes.slice();
      copy[at] = (copy[at] as number) ^ 0x10;
      expectError(() => decodeTrailer(copy, end), 'ERR_XPWC_CHECKSUM', end - 12);
    }
    expectError(() => decode({ crc: 0 }), 'ERR_XPWC_CHECKSUM');
  });

  it('the CRC is checked before any field it covers is trusted', () => {
    // A bit flip that turns entry_count into a huge value is a checksum error, not a limit one.
    const { bytes, end } = trailer();
    const copy = bytes.slice();
    copy[bytes.length - V3_FOOTER_SIZE + 8 + 3] = 0xff;
    expectError(() => decodeTrailer(copy, end), 'ERR_XPWC_CHECKSUM');
  });

  it('reserved flags set (any bit but V3_FLAG_ENTRY_LAYOUT)', () => {
    expectError(() => decode({ flags: 2 }), 'ERR_XPWC_BAD_FIELD', footerAt() + 40);
    expectError(() => decode({ flags: 0x8000_0001 }), 'ERR_XPWC_BAD_FIELD', footerAt() + 40);
  });

  it('generation 0', () => {
    expectError(() => decode({ generation: 0 }), 'ERR_XPWC_BAD_FIELD', footerAt() + 16);
  });

  it('generation above 2^53 - 1', () => {
    expectError(() => decode({ generation: 2n ** 53n }), 'ERR_XPWC_BAD_FIELD', footerAt() + 16);
  });

  it('prev_trailer_end set without prev_generation', () => {
    expectError(() => decode({ prevTrailerEnd: 5000 }), 'ERR_XPWC_BAD_FIELD', footerAt() + 24);
  });

  it('prev_generation not below generation', () => {
    expectError(
      () => decode({ generation: 3, prevGeneration: 3, prevTrailerEnd: 5000 }),
      'ERR_XPWC_BAD_FIELD',
      footerAt() + 32,
    );
  });

  it('prev_trailer_end after this trailer starts, or inside the header', () => {
    expectError(
      () => decode({ generation: 3, prevGeneration: 2, prevTrailerEnd: AT + 1 }),
      'ERR_XPWC_BAD_FIELD',
    );
    expectError(
      () => decode({ generation: 3, prevGeneration: 2, prevTrailerEnd: 4000 }),
      'ERR_XPWC_BAD_FIELD',
    );
    expect(decode({ generation: 3, prevGeneration: 2, prevTrailerEnd: AT })).toMatchObject({
      prevTrailerEnd: AT,
    });
  });

  it('entry_count above MAX_ENTRY_COUNT', () => {
    expectError(
      () => decode({ entryCount: MAX_ENTRY_COUNT + 1 }),
      'ERR_XPWC_LIMIT',
      footerAt() + 8,
    );
  });

  it('identity_len above MAX_IDENTITY_LENGTH', () => {
    const identity = 'i'.repeat(MAX_IDENTITY_LENGTH + 1);
    expectError(() => decode({ identity }), 'ERR_XPWC_LIMIT');
    expect(decode({ identity: identity.slice(1) }).identity).toHaveLength(MAX_IDENTITY_LENGTH);
  });

  it('identity_len larger than the space between index_start and the footer', () => {
    const { bytes } = trailer();
    const over = { identityLenField: bytes.length - V3_FOOTER_SIZE + 1 };
    expectError(() => decode(over), 'ERR_XPWC_TRUNCATED', footerAt() + 12);
  });

  it('identity that is not UTF-8', () => {
    expectError(() => decode({ identity: [0xc3, 0x28] }), 'ERR_XPWC_BAD_UTF8', AT + ENTRY_BYTES);
  });

  it('identity mismatch rejects the whole trailer', () => {
    expectError(() => decode({}, 'other'), 'ERR_XPWC_IDENTITY_MISMATCH', AT + ENTRY_BYTES);
    expectError(() => decode({}, ''), 'ERR_XPWC_IDENTITY_MISMATCH');
  });

  it('truncated index: entry_count says more entries than the index holds', () => {
    expectError(() => decode({ entryCount: 3 }), 'ERR_XPWC_TRUNCATED', AT + ENTRY_BYTES);
  });

  it('name_len + 28 bytes do not fit before the identity', () => {
    const entries = [ENTRIES[0] as RawEntry, { ...(ENTRIES[1] as RawEntry), nameLen: 10 }];
    expectError(() => decode({ entries }), 'ERR_XPWC_TRUNCATED', AT + 33);
  });

  it('name_len above MAX_NAME_LENGTH', () => {
    const entries = [{ ...(ENTRIES[0] as RawEntry), name: 'x'.repeat(MAX_NAME_LENGTH + 1) }];
    expectError(() => decode({ entries }), 'ERR_XPWC_LIMIT', AT);
  });

  it('a name that is not UTF-8 decodes losslessly (surrogateescape), not an error', () => {
    const entries = [{ ...(ENTRIES[0] as RawEntry), name: [0xed, 0xa0, 0x80] }]; // a UTF-8 surrogate
    expect(decode({ entries }).entries[0]?.name).toBe('\uDCED\uDCA0\uDC80');
  });

  it('entry data inside the header region', () => {
    const entries = [{ ...(ENTRIES[0] as RawEntry), fileOffset: V3_HEADER_SIZE - 1, dataSize: 1 }];
    expectError(() => decode({ entries }), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS', AT + 5);
  });

  it('file_offset at or beyond index_start', () => {
    const entries = [{ ...(ENTRIES[0] as RawEntry), fileOffset: AT, dataSize: 0 }];
    expectError(() => decode({ entries }), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS', AT + 5);
  });

  it('data_size > index_start - file_offset', () => {
    const entries = [{ ...(ENTRIES[0] as RawEntry), fileOffset: AT - 10, dataSize: 11 }];
    expectError(() => decode({ entries }), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS', AT + 13);
  });

  it('bytes between the last entry and the identity', () => {
    expectError(() => decode({ gap: [0, 0, 0] }), 'ERR_XPWC_TRAILING_BYTES', AT + ENTRY_BYTES);
  });

  it('entry_count smaller than the entries present', () => {
    expectError(() => decode({ entryCount: 1 }), 'ERR_XPWC_TRAILING_BYTES', AT + 33);
  });

  it('zero entries and an empty identity are valid in v3', () => {
    const t = decode({ entries: [], identity: '' });
    expect(t.entries).toEqual([]);
    expect(t.identity).toBe('');
  });

  it('bytes must reach back to index_start', () => {
    const { bytes, end } = trailer();
    expectError(() => decodeTrailer(bytes.subarray(1), end), 'ERR_XPWC_SHORT_INPUT', AT);
    expectError(() => decodeTrailer(bytes.subarray(-40), end), 'ERR_XPWC_SHORT_INPUT', end - 56);
  });

  it('hand-built and encoded trailers are identical', () => {
    const { bytes } = trailer({ generation: 9, prevGeneration: 4, prevTrailerEnd: 5000 });
    const encoded = encodeTrailer(
      ENTRIES.map((e) => ({
        name: e.name as string,
        fileOffset: Number(e.fileOffset),
        dataSize: Number(e.dataSize),
        seed: e.seed ?? 0,
        fingerprint: e.fingerprint ?? 0,
        crc32c: e.crc32c ?? 0,
      })),
      { indexStart: AT, identity: 'id', generation: 9, prevGeneration: 4, prevTrailerEnd: 5000 },
    );
    expect(encoded).toEqual(bytes);
  });
});

describe('v3 trailer checked with a CRC32C of the reader', () => {
  it('checks the trailer with the given function: the same bytes, the same verdict', () => {
    const { bytes, end } = trailer();
    const seen: number[] = [];
    const t = decodeTrailer(bytes, end, {
      crc32c: (covered) => {
        seen.push(covered.length);
        return crc32cOf(covered);
      },
    });
    expect(t.entries.length).toBe(2);
    // Everything from index_start up to the footer's CRC field.
    expect(seen).toEqual([bytes.length - V3_FOOTER_SIZE + 44]);
  });

  it('a function that disagrees rejects the trailer; anything but a function is refused', () => {
    const { bytes, end } = trailer();
    expectError(() => decodeTrailer(bytes, end, { crc32c: () => 0 }), 'ERR_XPWC_CHECKSUM');
    expectError(
      () => decodeTrailer(bytes, end, { crc32c: 'fast' as unknown as () => number }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
  });
});
