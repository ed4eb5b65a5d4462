// Builds XPWC bytes by hand, independently of the encoder, so tests can also break the rules.
import { crc32c } from './crc32c-reference.js';

export const MAGIC_BYTES = [0x43, 0x57, 0x50, 0x58] as const;

/** Appends little-endian integers and raw bytes, one byte at a time. */
export class ByteWriter {
  private readonly out: number[] = [];

  get length(): number {
    return this.out.length;
  }

  u8(...values: number[]): this {
    for (const v of values) this.out.push(v & 0xff);
    return this;
  }

  u32(value: number): this {
    for (let i = 0; i < 4; i++) this.out.push(Math.floor(value / 2 ** (8 * i)) & 0xff);
    return this;
  }

  u64(value: number | bigint): this {
    let v = BigInt(value);
    for (let i = 0; i < 8; i++) {
      this.out.push(Number(v & 0xffn));
      v >>= 8n;
    }
    return this;
  }

  bytes(data: ArrayLike<number>): this {
    for (let i = 0; i < data.length; i++) this.out.push((data[i] as number) & 0xff);
    return this;
  }

  utf8(text: string): this {
    return this.bytes(new TextEncoder().encode(text));
  }

  zeros(n: number): this {
    for (let i = 0; i < n; i++) this.out.push(0);
    return this;
  }

  toBytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

export interface RawEntry {
  /** Name as a string (UTF-8) or raw bytes. */
  name: string | number[];
  /** Overrides the length field (to lie about it). */
  nameLen?: number;
  fileOffset: number | bigint;
  dataSize: number | bigint;
  seed?: number;
  fingerprint?: number;
  crc32c?: number;
}

function nameBytes(name: string | number[]): number[] {
  return typeof name === 'string' ? Array.from(new TextEncoder().encode(name)) : name;
}

export function writeRawEntry(w: ByteWriter, e: RawEntry, version: 1 | 2 | 3): void {
  const name = nameBytes(e.name);
  w.u32(e.nameLen ?? name.length)
    .bytes(name)
    .u64(e.fileOffset)
    .u64(e.dataSize);
  if (version >= 2) w.u32(e.seed ?? 0);
  if (version === 3) w.u32(e.fingerprint ?? 0).u32(e.crc32c ?? 0);
}

export interface RawV2Options {
  entries: RawEntry[];
  /** Bytes of packed data before the index; index_start defaults to this. */
  dataLength: number;
  indexStart?: number | bigint;
  entryCount?: number;
  /** Bytes inserted between the last entry and the footer. */
  gap?: number[];
  magic?: number;
  version?: number;
}

/** A whole v1/v2 file: `dataLength` zero bytes, the entries, the footer. */
export function rawV2File(o: RawV2Options): Uint8Array {
  const w = new ByteWriter().zeros(o.dataLength);
  const version = o.version ?? 2;
  for (const e of o.entries) writeRawEntry(w, e, version === 1 ? 1 : 2);
  w.bytes(o.gap ?? []);
  w.u64(o.indexStart ?? o.dataLength).u32(o.entryCount ?? o.entries.length);
  w.u32(o.magic ?? 0x58505743).u32(version);
  return w.toBytes();
}

export interface RawV3Options {
  entries: RawEntry[];
  /** Absolute offset the trailer starts at (bytes before it are not materialised). */
  indexStart: number;
  /** Overrides the footer's index_start field. */
  indexStartField?: number | bigint;
  identity?: string | number[];
  identityLenField?: number;
  entryCount?: number;
  generation?: number | bigint;
  prevTrailerEnd?: number | bigint;
  prevGeneration?: number | bigint;
  flags?: number;
  gap?: number[];
  /** Stored CRC; default: the correct one. */
  crc?: number;
}

/** A v3 trailer (entries, identity, 56-byte footer) with a correct CRC unless overridden. */
export function rawV3Trailer(o: RawV3Options): Uint8Array {
  const w = new ByteWriter();
  for (const e of o.entries) writeRawEntry(w, e, 3);
  w.bytes(o.gap ?? []);
  const identity = nameBytes(o.identity ?? 'test-identity');
  w.bytes(identity);
  w.u64(o.indexStartField ?? o.indexStart)
    .u32(o.entryCount ?? o.entries.length)
    .u32(o.identityLenField ?? identity.length)
    .u64(o.generation ?? 1)
    .u64(o.prevTrailerEnd ?? 0)
    .u64(o.prevGeneration ?? 0)
    .u32(o.flags ?? 0);
  const body = w.toBytes();
  const crc = o.crc ?? crc32c(body) >>> 0;
  return new ByteWriter().bytes(body).u32(crc).bytes(MAGIC_BYTES).u32(3).toBytes();
}

/** The raw 32-byte fixed v3 header. */
export function rawHeaderFixed(
  o: {
    magic?: number;
    version?: number;
    headerSize?: number;
    pageSize?: number;
    flags?: number;
    reserved?: [number, number];
    crc?: number;
  } = {},
): Uint8Array {
  const w = new ByteWriter()
    .u32(o.magic ?? 0x58505743)
    .u32(o.version ?? 3)
    .u32(o.headerSize ?? 4096)
    .u32(o.pageSize ?? 4096)
    .u32(o.flags ?? 0)
    .u32(o.reserved?.[0] ?? 0)
    .u32(o.reserved?.[1] ?? 0);
  const body = w.toBytes();
  return new ByteWriter()
    .bytes(body)
    .u32(o.crc ?? crc32c(body) >>> 0)
    .toBytes();
}

/** A raw 32-byte commit slot with a correct CRC unless overridden. */
export function rawSlot(o: {
  generation: number | bigint;
  trailerOffset: number | bigint;
  trailerLength: number;
  trailerCrc32c: number;
  slotIndex: number;
  crc?: number;
}): Uint8Array {
  const body = new ByteWriter()
    .u64(o.generation)
    .u64(o.trailerOffset)
    .u32(o.trailerLength)
    .u32(o.trailerCrc32c)
    .u32(o.slotIndex)
    .toBytes();
  return new ByteWriter()
    .bytes(body)
    .u32(o.crc ?? crc32c(body) >>> 0)
    .toBytes();
}

/** Copies `bytes` into a new array of `size` bytes (zero padded) at `offset`. */
export function place(size: number, ...parts: Array<[number, Uint8Array]>): Uint8Array {
  const out = new Uint8Array(size);
  for (const [offset, bytes] of parts) out.set(bytes, offset);
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let p = 0;
  for (const part of parts) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}
