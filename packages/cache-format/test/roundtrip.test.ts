// Property tests: encode → decode is the identity for arbitrary valid entries, and decode →
// encode reproduces the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  commitSlotForTrailer,
  decodeCommitSlot,
  decodeHeader,
  decodeTrailer,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  MAX_FILE_SIZE,
  readFooter,
  V3_HEADER_SIZE,
  type XpwcEntryV2,
  type XpwcEntryV3,
} from '../src/index.js';

const u32 = fc.nat({ max: 0xffff_ffff });
const name = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 80 }),
  fc.constantFrom('', 'fc1.weightfc1.bias', '\uFEFFbom', 'é', '😀'),
);

/** indexStart plus entries whose data lies in [minOffset, indexStart). */
function entriesArb(minOffset: number, extra: boolean) {
  return fc
    .tuple(
      fc.oneof(
        fc.integer({ min: minOffset + 1, max: minOffset + 1_000_000 }),
        fc.integer({ min: minOffset + 1, max: MAX_FILE_SIZE - 1_000_000 }),
      ),
      fc.array(
        fc.tuple(
          name,
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          u32,
          u32,
          u32,
        ),
        {
          maxLength: 30,
        },
      ),
    )
    .map(([indexStart, raw]) => ({
      indexStart,
      entries: raw.map(([n, a, b, seed, fingerprint, crc]) => {
        const fileOffset = Math.min(
          indexStart - 1,
          minOffset + Math.floor(a * (indexStart - minOffset)),
        );
        const dataSize = Math.floor(b * (indexStart - fileOffset));
        const e: XpwcEntryV2 = { name: n, fileOffset, dataSize, seed };
        return extra ? ({ ...e, fingerprint, crc32c: crc } satisfies XpwcEntryV3) : e;
      }),
    }));
}

describe('round trip', () => {
  it('v2: decode(encode(entries)) == entries, encode(decode(bytes)) == bytes', () => {
    fc.assert(
      fc.property(
        entriesArb(0, false).filter((x) => x.entries.length > 0),
        ({ indexStart, entries }) => {
          const bytes = encodeTrailer(entries, { version: 2, indexStart });
          const end = indexStart + bytes.length;
          const t = decodeTrailer(bytes, BigInt(end));
          expect(t.version).toBe(2);
          expect(t.entries).toEqual(entries);
          expect(t.indexStart).toBe(indexStart);
          expect(encodeTrailer(t.entries, { version: 2, indexStart })).toEqual(bytes);
          expect(readFooter(bytes.subarray(-56), end)).toMatchObject({
            indexStart,
            entryCount: entries.length,
          });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('v3: entries, identity, generation and back-pointer round trip', () => {
    fc.assert(
      fc.property(
        entriesArb(V3_HEADER_SIZE, true),
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.integer({ min: 1, max: MAX_FILE_SIZE }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        ({ indexStart, entries }, identity, generation, prevAt, hasPrev) => {
          const withPrev = hasPrev && generation > 1 && indexStart >= V3_HEADER_SIZE + 56;
          const prevTrailerEnd = withPrev
            ? V3_HEADER_SIZE + 56 + Math.floor(prevAt * (indexStart - V3_HEADER_SIZE - 56))
            : 0;
          const options = {
            indexStart,
            identity,
            generation,
            prevTrailerEnd,
            prevGeneration: withPrev ? generation - 1 : 0,
          };
          const bytes = encodeTrailer(entries as XpwcEntryV3[], options);
          const end = indexStart + bytes.length;
          const t = decodeTrailer(bytes, end, { expectedIdentity: identity });
          if (t.version !== 3) throw new Error('expected v3');
          expect(t.entries).toEqual(entries);
          expect(t).toMatchObject({
            identity,
            generation,
            prevTrailerEnd,
            prevGeneration: options.prevGeneration,
            trailerEnd: end,
          });
          expect(encodeTrailer(t.entries, options)).toEqual(bytes);
          const slot = commitSlotForTrailer(bytes);
          expect(slot).toEqual({
            generation,
            trailerOffset: indexStart,
            trailerLength: bytes.length,
            trailerCrc32c: t.trailerCrc32c,
          });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('commit slots and headers round trip', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.integer({ min: V3_HEADER_SIZE, max: 2 ** 50 }),
        fc.integer({ min: 56, max: 1 << 28 }),
        u32,
        fc.constantFrom(0 as const, 1 as const),
        fc.integer({ min: 0, max: 30 }),
        (generation, trailerOffset, trailerLength, trailerCrc32c, index, pageShift) => {
          const slot = { generation, trailerOffset, trailerLength, trailerCrc32c };
          expect(decodeCommitSlot(encodeCommitSlot(slot, index), index)).toEqual({
            status: 'valid',
            index,
            slot,
          });
          const slots: [typeof slot | null, typeof slot | null] =
            index === 0 ? [slot, null] : [null, slot];
          const h = decodeHeader(encodeHeader({ pageSize: 2 ** pageShift, slots }));
          expect(h.pageSize).toBe(2 ** pageShift);
          expect(h.slots[index]).toEqual({ status: 'valid', index, slot });
        },
      ),
      { numRuns: 200 },
    );
  });
});
