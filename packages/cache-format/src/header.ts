import { isValidPageSize } from './align.js';
import { assertBytes, isSafeOffset, isU32, readU64, viewOf, writeU64 } from './bytes.js';
import {
  COMMIT_SLOT_OFFSETS,
  COMMIT_SLOT_SIZE,
  MAGIC,
  V3_FOOTER_SIZE,
  V3_HEADER_FIXED_SIZE,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  VERSION_3,
} from './constants.js';
import { crc32cOf } from './crc.js';
import { XpwcFormatError } from './errors.js';
import { readFooter } from './footer.js';
import { MAX_FILE_SIZE, MAX_TRAILER_BYTES } from './limits.js';

/** Byte offsets of the fixed v3 header fields (at file offset 0). */
export const V3_HEADER_FIELDS = {
  magic: 0,
  version: 4,
  headerSize: 8,
  pageSize: 12,
  flags: 16,
  reserved: 20, // 8 bytes
  headerCrc32c: 28,
} as const;

/** Byte offsets of the commit slot fields, relative to the slot's first byte. */
export const COMMIT_SLOT_FIELDS = {
  generation: 0,
  trailerOffset: 8,
  trailerLength: 16,
  trailerCrc32c: 20,
  slotIndex: 24,
  slotCrc32c: 28,
} as const;

export type SlotIndex = 0 | 1;

/** "The last committed trailer is `trailerLength` bytes at `trailerOffset`, generation N." */
export interface CommitSlot {
  readonly generation: number;
  /** The trailer's `index_start`. */
  readonly trailerOffset: number;
  /** From `index_start` to the end of the footer. */
  readonly trailerLength: number;
  /** The trailer footer's `trailer_crc32c`, so the slot names exactly one trailer. */
  readonly trailerCrc32c: number;
}

export type SlotState =
  | { readonly status: 'valid'; readonly index: SlotIndex; readonly slot: CommitSlot }
  | { readonly status: 'empty'; readonly index: SlotIndex }
  | { readonly status: 'corrupt'; readonly index: SlotIndex; readonly error: XpwcFormatError };

export interface V3Header {
  /** Page size of the writer that created the file (informational; offsets are absolute). */
  readonly pageSize: number;
  readonly slots: readonly [SlotState, SlotState];
}

function headerCrcOf(bytes: Uint8Array): number {
  return crc32cOf(bytes.subarray(0, V3_HEADER_FIELDS.headerCrc32c));
}

/**
 * Encodes the 32-byte commit slot written at `COMMIT_SLOT_OFFSETS[index]`.
 */
export function encodeCommitSlot(slot: CommitSlot, index: SlotIndex): Uint8Array {
  if (index !== 0 && index !== 1) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'slot index must be 0 or 1');
  }
  if (slot === null || typeof slot !== 'object') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'slot must be an object');
  }
  const problem = checkSlotValues(slot);
  if (problem !== undefined) throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', problem);
  const out = new Uint8Array(COMMIT_SLOT_SIZE);
  const dv = viewOf(out);
  const S = COMMIT_SLOT_FIELDS;
  writeU64(dv, S.generation, slot.generation);
  writeU64(dv, S.trailerOffset, slot.trailerOffset);
  dv.setUint32(S.trailerLength, slot.trailerLength, true);
  dv.setUint32(S.trailerCrc32c, slot.trailerCrc32c, true);
  dv.setUint32(S.slotIndex, index, true);
  dv.setUint32(S.slotCrc32c, crc32cOf(out.subarray(0, S.slotCrc32c)), true);
  return out;
}

/** Returns why the slot's values are impossible, or undefined when they are fine. */
function checkSlotValues(slot: CommitSlot): string | undefined {
  if (!isSafeOffset(slot.generation) || slot.generation < 1) {
    return `generation ${slot.generation} must be in [1, 2^53 - 1]`;
  }
  if (!isSafeOffset(slot.trailerOffset) || slot.trailerOffset < V3_HEADER_SIZE) {
    return `trailer offset ${slot.trailerOffset} is before the end of the header (${V3_HEADER_SIZE})`;
  }
  if (
    !isSafeOffset(slot.trailerLength) ||
    slot.trailerLength < V3_FOOTER_SIZE ||
    slot.trailerLength > MAX_TRAILER_BYTES
  ) {
    return `trailer length ${slot.trailerLength} is outside [${V3_FOOTER_SIZE}, MAX_TRAILER_BYTES]`;
  }
  if (slot.trailerOffset + slot.trailerLength > MAX_FILE_SIZE) {
    return 'trailer end is beyond MAX_FILE_SIZE';
  }
  if (!isU32(slot.trailerCrc32c)) return 'trailerCrc32c must be a u32';
  return undefined;
}

/**
 * Decodes one commit slot. Never throws for bad content: a slot of all zero bytes is `empty`
 * (never written), a slot whose CRC or fields are wrong is `corrupt`, with the reason as an
 * `XpwcFormatError`. A slot has a 512-byte sector to itself and storage writes a sector whole
 * or not at all, so corrupt means damaged (bit rot, a stray write), not an interrupted save.
 */
export function decodeCommitSlot(bytes: Uint8Array, index: SlotIndex): SlotState {
  assertBytes(bytes, 'decodeCommitSlot: bytes');
  if (index !== 0 && index !== 1) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'slot index must be 0 or 1');
  }
  const at = COMMIT_SLOT_OFFSETS[index];
  if (bytes.length < COMMIT_SLOT_SIZE) {
    return {
      status: 'corrupt',
      index,
      error: new XpwcFormatError(
        'ERR_XPWC_TRUNCATED',
        `commit slot ${index} is ${bytes.length} bytes, needs ${COMMIT_SLOT_SIZE}`,
        at + bytes.length,
      ),
    };
  }
  let zero = true;
  for (let i = 0; i < COMMIT_SLOT_SIZE; i++) {
    if (bytes[i] !== 0) {
      zero = false;
      break;
    }
  }
  if (zero) return { status: 'empty', index };
  const dv = viewOf(bytes);
  const S = COMMIT_SLOT_FIELDS;
  const stored = dv.getUint32(S.slotCrc32c, true);
  const actual = crc32cOf(bytes.subarray(0, S.slotCrc32c));
  const corrupt = (
    code: 'ERR_XPWC_CHECKSUM' | 'ERR_XPWC_BAD_FIELD',
    message: string,
    off: number,
  ) => ({ status: 'corrupt', index, error: new XpwcFormatError(code, message, at + off) }) as const;
  if (stored !== actual) {
    return corrupt(
      'ERR_XPWC_CHECKSUM',
      `commit slot ${index} CRC32C mismatch (torn or corrupt slot)`,
      S.slotCrc32c,
    );
  }
  const slotIndex = dv.getUint32(S.slotIndex, true);
  if (slotIndex !== index) {
    return corrupt(
      'ERR_XPWC_BAD_FIELD',
      `commit slot ${index} says it is slot ${slotIndex}`,
      S.slotIndex,
    );
  }
  const slot: CommitSlot = {
    generation: readU64(dv, S.generation),
    trailerOffset: readU64(dv, S.trailerOffset),
    trailerLength: dv.getUint32(S.trailerLength, true),
    trailerCrc32c: dv.getUint32(S.trailerCrc32c, true),
  };
  const problem = checkSlotValues(slot);
  if (problem !== undefined)
    return corrupt('ERR_XPWC_BAD_FIELD', `commit slot ${index}: ${problem}`, 0);
  return { status: 'valid', index, slot };
}

export interface EncodeHeaderOptions {
  /** The writer's page size (power of two). */
  readonly pageSize: number;
  /** Initial slot contents; omitted or null slots are written empty (all zero). */
  readonly slots?: readonly [CommitSlot | null, CommitSlot | null];
}

/**
 * Encodes the whole `V3_HEADER_SIZE`-byte header region of a new v3 file: the fixed part, both
 * commit slots (normally empty), zero padding. Write it and make it durable before the first
 * commit.
 */
export function encodeHeader(options: EncodeHeaderOptions): Uint8Array {
  if (options === null || typeof options !== 'object') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'options must be an object');
  }
  const { pageSize } = options;
  if (!isValidPageSize(pageSize) || pageSize > 0xffff_ffff) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'pageSize must be a power of two');
  }
  const out = new Uint8Array(V3_HEADER_SIZE);
  const dv = viewOf(out);
  const H = V3_HEADER_FIELDS;
  dv.setUint32(H.magic, MAGIC, true);
  dv.setUint32(H.version, VERSION_3, true);
  dv.setUint32(H.headerSize, V3_HEADER_SIZE, true);
  dv.setUint32(H.pageSize, pageSize, true);
  dv.setUint32(H.headerCrc32c, headerCrcOf(out), true);
  const slots = options.slots ?? [null, null];
  for (const index of [0, 1] as const) {
    const slot = slots[index];
    if (slot !== null && slot !== undefined)
      out.set(encodeCommitSlot(slot, index), COMMIT_SLOT_OFFSETS[index]);
  }
  return out;
}

/**
 * True when `bytes` (the start of a file) begins with a valid v3 fixed header: right magic,
 * version 3 and header CRC. Needs only `V3_HEADER_FIXED_SIZE` bytes. Never throws.
 */
export function isV3Header(bytes: Uint8Array): boolean {
  if (!(bytes instanceof Uint8Array) || bytes.length < V3_HEADER_FIXED_SIZE) return false;
  const dv = viewOf(bytes);
  const H = V3_HEADER_FIELDS;
  return (
    dv.getUint32(H.magic, true) === MAGIC &&
    dv.getUint32(H.version, true) === VERSION_3 &&
    dv.getUint32(H.headerCrc32c, true) === headerCrcOf(bytes)
  );
}

/**
 * Decodes the v3 header from the first `V3_HEADER_READ_SIZE` bytes of a file (more is fine).
 * The fixed part must be valid (else it throws); each slot is reported as valid/empty/corrupt.
 */
export function decodeHeader(bytes: Uint8Array): V3Header {
  assertBytes(bytes, 'decodeHeader: bytes');
  if (bytes.length < V3_HEADER_FIXED_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `v3 header needs ${V3_HEADER_FIXED_SIZE} bytes, got ${bytes.length}`,
      bytes.length,
    );
  }
  const dv = viewOf(bytes);
  const H = V3_HEADER_FIELDS;
  const magic = dv.getUint32(H.magic, true);
  if (magic !== MAGIC) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_MAGIC',
      `header magic is 0x${magic.toString(16).padStart(8, '0')}, expected 0x${MAGIC.toString(16)}`,
      H.magic,
    );
  }
  if (dv.getUint32(H.headerCrc32c, true) !== headerCrcOf(bytes)) {
    throw new XpwcFormatError('ERR_XPWC_CHECKSUM', 'v3 header CRC32C mismatch', H.headerCrc32c);
  }
  const version = dv.getUint32(H.version, true);
  if (version !== VERSION_3) {
    throw new XpwcFormatError(
      'ERR_XPWC_UNSUPPORTED_VERSION',
      `header version ${version}, expected ${VERSION_3}`,
      H.version,
    );
  }
  const headerSize = dv.getUint32(H.headerSize, true);
  if (headerSize !== V3_HEADER_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_FIELD',
      `header_size ${headerSize}, expected ${V3_HEADER_SIZE}`,
      H.headerSize,
    );
  }
  const pageSize = dv.getUint32(H.pageSize, true);
  if (!isValidPageSize(pageSize)) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_FIELD',
      `page_size ${pageSize} is not a power of two`,
      H.pageSize,
    );
  }
  if (dv.getUint32(H.flags, true) !== 0) {
    throw new XpwcFormatError(
      'ERR_XPWC_BAD_FIELD',
      'header flags are reserved, must be 0',
      H.flags,
    );
  }
  if (dv.getUint32(H.reserved, true) !== 0 || dv.getUint32(H.reserved + 4, true) !== 0) {
    throw new XpwcFormatError('ERR_XPWC_BAD_FIELD', 'reserved header bytes must be 0', H.reserved);
  }
  if (bytes.length < V3_HEADER_READ_SIZE) {
    throw new XpwcFormatError(
      'ERR_XPWC_TRUNCATED',
      `v3 header with commit slots needs ${V3_HEADER_READ_SIZE} bytes, got ${bytes.length}`,
      bytes.length,
    );
  }
  const slot = (index: SlotIndex) =>
    decodeCommitSlot(
      bytes.subarray(COMMIT_SLOT_OFFSETS[index], COMMIT_SLOT_OFFSETS[index] + COMMIT_SLOT_SIZE),
      index,
    );
  return { pageSize, slots: [slot(0), slot(1)] };
}

/** Valid slots, newest generation first (ties: slot 0 first). */
export function orderCommitSlots(
  slots: readonly SlotState[],
): Array<Extract<SlotState, { status: 'valid' }>> {
  const valid = slots.filter(
    (s): s is Extract<SlotState, { status: 'valid' }> => s.status === 'valid',
  );
  return valid.sort((a, b) => b.slot.generation - a.slot.generation || a.index - b.index);
}

/**
 * The slot naming the newest committed trailer: the valid slot with the highest generation,
 * or null when neither slot is valid. (The trailer it names still has to be read and
 * verified; `readCommittedTrailer` does that and falls back to the other slot.)
 */
export function pickCommittedTrailer(
  slots: readonly SlotState[],
): Extract<SlotState, { status: 'valid' }> | null {
  return orderCommitSlots(slots)[0] ?? null;
}

/** What a writer needs to commit its next trailer. */
export interface CommitPlan {
  /** Slot to overwrite: never the one holding the trailer the writer loaded. */
  readonly slotIndex: SlotIndex;
  /** Generation of the new trailer and slot: above every valid slot's generation. */
  readonly generation: number;
  /** Back-pointer for the new trailer (0 when nothing was committed). */
  readonly prevTrailerEnd: number;
  readonly prevGeneration: number;
}

/**
 * Plans the next commit. `loaded` is the commit the writer is building on (from
 * `readCommittedTrailer`), or null for a fresh cache. The new slot never overwrites the slot of
 * `loaded`, so if the new commit is torn, `loaded` is still found; its generation is above every
 * valid slot's (even one whose trailer turned out unusable) so the new commit wins when intact.
 */
export function planCommit(
  slots: readonly SlotState[],
  loaded: { readonly slotIndex: SlotIndex; readonly slot: CommitSlot } | null,
): CommitPlan {
  const ordered = orderCommitSlots(slots);
  const maxGeneration = ordered[0]?.slot.generation ?? 0;
  if (maxGeneration >= MAX_FILE_SIZE) {
    throw new XpwcFormatError('ERR_XPWC_LIMIT', 'generation counter exhausted');
  }
  const generation = maxGeneration + 1;
  if (loaded !== null) {
    return {
      slotIndex: loaded.slotIndex === 0 ? 1 : 0,
      generation,
      prevTrailerEnd: loaded.slot.trailerOffset + loaded.slot.trailerLength,
      prevGeneration: loaded.slot.generation,
    };
  }
  // Nothing loaded: prefer a slot that is not valid, else the older one.
  const free = slots.find((s) => s.status !== 'valid');
  const slotIndex: SlotIndex =
    free !== undefined ? free.index : (ordered[ordered.length - 1]?.index ?? 0);
  return { slotIndex, generation, prevTrailerEnd: 0, prevGeneration: 0 };
}

/**
 * The commit slot naming an encoded v3 trailer (as returned by `encodeTrailer`).
 */
export function commitSlotForTrailer(trailer: Uint8Array): CommitSlot {
  assertBytes(trailer, 'commitSlotForTrailer: trailer');
  const footer = readFooter(trailer);
  if (footer.version !== VERSION_3) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'only v3 trailers are committed through slots',
    );
  }
  return {
    generation: footer.generation,
    trailerOffset: footer.indexStart,
    trailerLength: trailer.length,
    trailerCrc32c: footer.trailerCrc32c,
  };
}
