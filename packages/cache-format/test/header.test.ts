// v3 header and commit slots: encoding, one test per validation rule, slot selection.
import { describe, expect, it } from 'vitest';
import {
  COMMIT_SLOT_OFFSETS,
  type CommitSlot,
  decodeCommitSlot,
  decodeHeader,
  encodeCommitSlot,
  encodeHeader,
  isV3Header,
  MAX_TRAILER_BYTES,
  orderCommitSlots,
  pickCommittedTrailer,
  planCommit,
  type SlotState,
  type XpwcErrorCode,
  XpwcFormatError,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { place, rawHeaderFixed, rawSlot } from './support/raw.js';

const SLOT: CommitSlot = {
  generation: 5,
  trailerOffset: 8192,
  trailerLength: 200,
  trailerCrc32c: 0xabcdef01,
};

function corruptCode(state: SlotState): XpwcErrorCode | undefined {
  return state.status === 'corrupt' ? state.error.code : undefined;
}

describe('header', () => {
  it('round trips, with and without slots', () => {
    const h = encodeHeader({ pageSize: 16384, slots: [null, SLOT] });
    expect(isV3Header(h)).toBe(true);
    expect(decodeHeader(h)).toEqual({
      pageSize: 16384,
      slots: [
        { status: 'empty', index: 0 },
        { status: 'valid', index: 1, slot: SLOT },
      ],
    });
    expect(decodeHeader(encodeHeader({ pageSize: 4096 })).slots.map((s) => s.status)).toEqual([
      'empty',
      'empty',
    ]);
  });

  it('the hand-built fixed part equals the encoder output', () => {
    expect(encodeHeader({ pageSize: 4096 }).subarray(0, 32)).toEqual(rawHeaderFixed());
  });

  const withFixed = (fixed: Uint8Array) => place(1056, [0, fixed]);

  it('bad magic', () => {
    expectError(
      () => decodeHeader(withFixed(rawHeaderFixed({ magic: 1 }))),
      'ERR_XPWC_BAD_MAGIC',
      0,
    );
  });

  it('header CRC mismatch', () => {
    expectError(() => decodeHeader(withFixed(rawHeaderFixed({ crc: 0 }))), 'ERR_XPWC_CHECKSUM', 28);
  });

  it('header version other than 3', () => {
    expectError(
      () => decodeHeader(withFixed(rawHeaderFixed({ version: 2 }))),
      'ERR_XPWC_UNSUPPORTED_VERSION',
      4,
    );
  });

  it('header_size other than 4096', () => {
    expectError(
      () => decodeHeader(withFixed(rawHeaderFixed({ headerSize: 8192 }))),
      'ERR_XPWC_BAD_FIELD',
      8,
    );
  });

  it('page_size not a power of two', () => {
    for (const pageSize of [0, 3000]) {
      expectError(
        () => decodeHeader(withFixed(rawHeaderFixed({ pageSize }))),
        'ERR_XPWC_BAD_FIELD',
        12,
      );
    }
  });

  it('flags or reserved bytes set', () => {
    expectError(
      () => decodeHeader(withFixed(rawHeaderFixed({ flags: 2 }))),
      'ERR_XPWC_BAD_FIELD',
      16,
    );
    expectError(
      () => decodeHeader(withFixed(rawHeaderFixed({ reserved: [0, 1] }))),
      'ERR_XPWC_BAD_FIELD',
      20,
    );
  });

  it('fewer bytes than the fixed part, or than fixed part + slots', () => {
    expectError(() => decodeHeader(rawHeaderFixed().subarray(0, 31)), 'ERR_XPWC_TRUNCATED', 31);
    expectError(() => decodeHeader(place(1055, [0, rawHeaderFixed()])), 'ERR_XPWC_TRUNCATED', 1055);
  });

  it('isV3Header never throws', () => {
    expect(isV3Header(new Uint8Array(3))).toBe(false);
    expect(isV3Header(null as unknown as Uint8Array)).toBe(false);
    expect(isV3Header(rawHeaderFixed({ crc: 1 }))).toBe(false);
  });

  it('encodeHeader refuses a bad page size', () => {
    expectError(() => encodeHeader({ pageSize: 1000 }), 'ERR_XPWC_INVALID_ARGUMENT');
  });
});

describe('commit slot', () => {
  const raw = (over: Partial<Parameters<typeof rawSlot>[0]> = {}) =>
    rawSlot({
      generation: 5,
      trailerOffset: 8192,
      trailerLength: 200,
      trailerCrc32c: 0xabcdef01,
      slotIndex: 1,
      ...over,
    });

  it('round trips and matches the hand-built bytes', () => {
    expect(encodeCommitSlot(SLOT, 1)).toEqual(raw());
    expect(decodeCommitSlot(raw(), 1)).toEqual({ status: 'valid', index: 1, slot: SLOT });
  });

  it('all zero = empty (never written)', () => {
    expect(decodeCommitSlot(new Uint8Array(32), 0)).toEqual({ status: 'empty', index: 0 });
  });

  it('CRC mismatch = corrupt (torn write)', () => {
    const s = decodeCommitSlot(raw({ crc: 0x1234 }), 1);
    expect(corruptCode(s)).toBe('ERR_XPWC_CHECKSUM');
    expect(s.status === 'corrupt' && s.error.offset).toBe(COMMIT_SLOT_OFFSETS[1] + 28);
    // A half-written slot over an empty one
    const half = new Uint8Array(32);
    half.set(raw().subarray(0, 16));
    expect(corruptCode(decodeCommitSlot(half, 1))).toBe('ERR_XPWC_CHECKSUM');
  });

  it('slot written at the other position', () => {
    expect(corruptCode(decodeCommitSlot(raw({ slotIndex: 0 }), 1))).toBe('ERR_XPWC_BAD_FIELD');
  });

  it('generation 0 or above 2^53 - 1', () => {
    expect(corruptCode(decodeCommitSlot(raw({ generation: 0 }), 1))).toBe('ERR_XPWC_BAD_FIELD');
    expect(corruptCode(decodeCommitSlot(raw({ generation: 2n ** 60n }), 1))).toBe(
      'ERR_XPWC_BAD_FIELD',
    );
  });

  it('trailer offset inside the header', () => {
    expect(corruptCode(decodeCommitSlot(raw({ trailerOffset: 100 }), 1))).toBe(
      'ERR_XPWC_BAD_FIELD',
    );
  });

  it('trailer length below a footer or above MAX_TRAILER_BYTES', () => {
    expect(corruptCode(decodeCommitSlot(raw({ trailerLength: 55 }), 1))).toBe('ERR_XPWC_BAD_FIELD');
    expect(corruptCode(decodeCommitSlot(raw({ trailerLength: MAX_TRAILER_BYTES + 1 }), 1))).toBe(
      'ERR_XPWC_BAD_FIELD',
    );
  });

  it('trailer end beyond 2^53 - 1', () => {
    expect(corruptCode(decodeCommitSlot(raw({ trailerOffset: 2 ** 53 - 100 }), 1))).toBe(
      'ERR_XPWC_BAD_FIELD',
    );
  });

  it('short slot bytes', () => {
    expect(corruptCode(decodeCommitSlot(raw().subarray(0, 31), 1))).toBe('ERR_XPWC_TRUNCATED');
  });

  it('encodeCommitSlot validates', () => {
    expectError(() => encodeCommitSlot({ ...SLOT, generation: 0 }, 0), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(() => encodeCommitSlot(SLOT, 2 as 0), 'ERR_XPWC_INVALID_ARGUMENT');
  });
});

describe('slot selection', () => {
  const valid = (index: 0 | 1, generation: number): SlotState => ({
    status: 'valid',
    index,
    slot: { ...SLOT, generation, trailerOffset: 4096 * generation },
  });
  const empty = (index: 0 | 1): SlotState => ({ status: 'empty', index });
  const corrupt = (index: 0 | 1): SlotState => ({
    status: 'corrupt',
    index,
    error: new XpwcFormatError('ERR_XPWC_CHECKSUM', 'x', 0),
  });

  it('pickCommittedTrailer chooses the newest valid slot', () => {
    expect(pickCommittedTrailer([valid(0, 3), valid(1, 4)])?.index).toBe(1);
    expect(pickCommittedTrailer([valid(0, 7), valid(1, 6)])?.index).toBe(0);
    expect(pickCommittedTrailer([corrupt(0), valid(1, 6)])?.index).toBe(1);
    expect(pickCommittedTrailer([valid(0, 1), empty(1)])?.index).toBe(0);
    expect(pickCommittedTrailer([empty(0), empty(1)])).toBeNull();
    expect(pickCommittedTrailer([corrupt(0), corrupt(1)])).toBeNull();
    expect(orderCommitSlots([valid(0, 2), valid(1, 9)]).map((s) => s.index)).toEqual([1, 0]);
  });

  it('planCommit: fresh file writes slot 0, generation 1', () => {
    expect(planCommit([empty(0), empty(1)], null)).toEqual({
      slotIndex: 0,
      generation: 1,
      prevTrailerEnd: 0,
      prevGeneration: 0,
    });
  });

  it('planCommit: overwrites the slot that was not loaded, generation above all valid slots', () => {
    const slots = [valid(0, 3), valid(1, 4)];
    const loaded = {
      slotIndex: 1 as const,
      slot: (slots[1] as Extract<SlotState, { status: 'valid' }>).slot,
    };
    expect(planCommit(slots, loaded)).toEqual({
      slotIndex: 0,
      generation: 5,
      prevTrailerEnd: 4 * 4096 + 200,
      prevGeneration: 4,
    });
    // Fell back to generation 3 in slot 0 because generation 4's trailer was unusable:
    // the new commit goes to slot 1 (never over the loaded one) as generation 5.
    const older = {
      slotIndex: 0 as const,
      slot: (slots[0] as Extract<SlotState, { status: 'valid' }>).slot,
    };
    expect(planCommit(slots, older)).toMatchObject({
      slotIndex: 1,
      generation: 5,
      prevGeneration: 3,
    });
  });

  it('planCommit without a usable commit prefers a non-valid slot', () => {
    expect(planCommit([valid(0, 2), corrupt(1)], null).slotIndex).toBe(1);
    expect(planCommit([valid(0, 2), valid(1, 1)], null)).toMatchObject({
      slotIndex: 1,
      generation: 3,
    });
  });
});
