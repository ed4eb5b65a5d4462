// A minimal in-memory implementation of the v3 writer protocol (the real one lives in the cache
// package), expressed as a list of writes so tests can "crash" after any byte of them.
import {
  alignUp,
  COMMIT_SLOT_OFFSETS,
  type CommittedTrailer,
  commitSlotForTrailer,
  crc32cOf,
  decodeHeader,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  isV3Header,
  isXpwcFormatError,
  type PackingLayout,
  planCommit,
  readCommittedTrailer,
  V3_HEADER_SIZE,
  type XpwcEntryV3,
} from '../../src/index.js';

export interface WriteOp {
  /** 'data' | 'trailer' | 'slot' | 'header' — what the bytes are. */
  kind: 'header' | 'data' | 'trailer' | 'slot';
  offset: number;
  bytes: Uint8Array;
}

/** A growable byte file. Writing past the end extends it (the gap reads as zeros). */
export class MemFile {
  private buf = new Uint8Array(0);
  size = 0;

  constructor(initial?: Uint8Array) {
    if (initial) this.write(0, initial);
  }

  write(offset: number, bytes: Uint8Array): void {
    const end = offset + bytes.length;
    if (end > this.buf.length) {
      const next = new Uint8Array(Math.max(end, this.buf.length * 2, 8192));
      next.set(this.buf.subarray(0, this.size));
      this.buf = next;
    }
    this.buf.set(bytes, offset);
    this.size = Math.max(this.size, end);
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.size);
  }

  read = (offset: number, length: number): Uint8Array =>
    this.buf.slice(offset, Math.min(offset + length, this.size));

  clone(): MemFile {
    return new MemFile(this.bytes());
  }
}

export interface NewEntry {
  name: string;
  data: Uint8Array;
  seed?: number;
  fingerprint?: number;
  layout?: PackingLayout;
}

export const IDENTITY = 'xnnpack@test/x86_64-avx2/gemm-4x8';

/** The committed state of `file`, or null when it has no header or no commit yet. */
export function loadCommitted(file: MemFile, expectedIdentity = IDENTITY): CommittedTrailer | null {
  if (file.size < V3_HEADER_SIZE || !isV3Header(file.read(0, 32))) return null;
  try {
    return readCommittedTrailer(file.read, file.size, { expectedIdentity });
  } catch (e) {
    if (isXpwcFormatError(e, 'ERR_XPWC_NO_COMMIT')) return null;
    throw e;
  }
}

/**
 * The writes of one commit, in protocol order: (header, for a new file) → data regions →
 * trailer → commit slot. Each group is followed by an fsync in a real writer, so a crash
 * leaves a prefix of this byte sequence on disk.
 */
export function planCommitWrites(file: MemFile, added: NewEntry[], pageSize = 4096): WriteOp[] {
  const ops: WriteOp[] = [];
  let size = file.size;
  let header =
    size >= V3_HEADER_SIZE && isV3Header(file.read(0, 32))
      ? decodeHeader(file.read(0, 4096))
      : null;
  if (header === null) {
    const bytes = encodeHeader({ pageSize });
    ops.push({ kind: 'header', offset: 0, bytes });
    header = decodeHeader(bytes);
    size = Math.max(size, V3_HEADER_SIZE);
  }
  const loaded = loadCommitted(file);
  const byName = new Map<string, XpwcEntryV3>();
  for (const e of loaded?.trailer.entries ?? []) byName.set(e.name, e);
  let at = alignUp(size, pageSize);
  for (const n of added) {
    ops.push({ kind: 'data', offset: at, bytes: n.data });
    byName.set(n.name, {
      name: n.name,
      fileOffset: at,
      dataSize: n.data.length,
      seed: n.seed ?? 0x5eed,
      fingerprint: n.fingerprint ?? 0,
      crc32c: crc32cOf(n.data),
      ...(n.layout === undefined ? {} : { layout: n.layout }),
    });
    at = alignUp(at + Math.max(n.data.length, 1), pageSize);
  }
  const plan = planCommit(header.slots, loaded);
  const trailer = encodeTrailer([...byName.values()], {
    indexStart: at,
    identity: IDENTITY,
    generation: plan.generation,
    prevTrailerEnd: plan.prevTrailerEnd,
    prevGeneration: plan.prevGeneration,
  });
  ops.push({ kind: 'trailer', offset: at, bytes: trailer });
  ops.push({
    kind: 'slot',
    offset: COMMIT_SLOT_OFFSETS[plan.slotIndex],
    bytes: encodeCommitSlot(commitSlotForTrailer(trailer), plan.slotIndex),
  });
  return ops;
}

export function totalBytes(ops: WriteOp[]): number {
  return ops.reduce((n, op) => n + op.bytes.length, 0);
}

/** Applies the first `limit` bytes of `ops` (all of them by default) — a crash after `limit`. */
export function applyWrites(file: MemFile, ops: WriteOp[], limit = Number.POSITIVE_INFINITY): void {
  let left = limit;
  for (const op of ops) {
    if (left <= 0) return;
    const n = Math.min(op.bytes.length, left);
    file.write(op.offset, op.bytes.subarray(0, n));
    left -= n;
  }
}

/** Commits `added` completely. */
export function commit(file: MemFile, added: NewEntry[], pageSize = 4096): void {
  applyWrites(file, planCommitWrites(file, added, pageSize));
}

export function bytesOf(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
