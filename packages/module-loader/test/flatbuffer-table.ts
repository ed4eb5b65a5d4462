import { ByteBuffer } from 'flatbuffers';

/**
 * A flatbuffer table read by slot number (the field's index in its schema), so tests
 * check written files without generated code.
 */
export class FlatTable {
  constructor(
    readonly bb: ByteBuffer,
    readonly pos: number,
  ) {}

  /** The root table of a flatbuffer starting at byte 0 of `bytes`. */
  static root(bytes: Uint8Array): FlatTable {
    const bb = new ByteBuffer(bytes);
    return new FlatTable(bb, bb.readUint32(0));
  }

  private field(slot: number): number {
    return this.bb.__offset(this.pos, 4 + 2 * slot);
  }

  has(slot: number): boolean {
    return this.field(slot) !== 0;
  }

  u8(slot: number): number {
    const o = this.field(slot);
    return o === 0 ? 0 : this.bb.readUint8(this.pos + o);
  }

  u16(slot: number): number {
    const o = this.field(slot);
    return o === 0 ? 0 : this.bb.readUint16(this.pos + o);
  }

  u32(slot: number): number {
    const o = this.field(slot);
    return o === 0 ? 0 : this.bb.readUint32(this.pos + o);
  }

  i32(slot: number): number {
    const o = this.field(slot);
    return o === 0 ? 0 : this.bb.readInt32(this.pos + o);
  }

  u64(slot: number): bigint {
    const o = this.field(slot);
    return o === 0 ? 0n : this.bb.readUint64(this.pos + o);
  }

  i64(slot: number): bigint {
    const o = this.field(slot);
    return o === 0 ? 0n : this.bb.readInt64(this.pos + o);
  }

  f32(slot: number): number {
    const o = this.field(slot);
    return o === 0 ? 0 : this.bb.readFloat32(this.pos + o);
  }

  str(slot: number): string | null {
    const o = this.field(slot);
    return o === 0 ? null : (this.bb.__string(this.pos + o) as string);
  }

  table(slot: number): FlatTable | null {
    const o = this.field(slot);
    return o === 0 ? null : new FlatTable(this.bb, this.bb.__indirect(this.pos + o));
  }

  /** Absolute position of a vector's first element and its length. */
  vector(slot: number): { start: number; length: number } | null {
    const o = this.field(slot);
    if (o === 0) return null;
    return { start: this.bb.__vector(this.pos + o), length: this.bb.__vector_len(this.pos + o) };
  }

  tables(slot: number): FlatTable[] {
    const v = this.vector(slot);
    if (v === null) return [];
    return Array.from(
      { length: v.length },
      (_, i) => new FlatTable(this.bb, this.bb.__indirect(v.start + 4 * i)),
    );
  }

  u32s(slot: number): number[] {
    const v = this.vector(slot);
    return v === null
      ? []
      : Array.from({ length: v.length }, (_, i) => this.bb.readUint32(v.start + 4 * i));
  }

  i32s(slot: number): number[] {
    const v = this.vector(slot);
    return v === null
      ? []
      : Array.from({ length: v.length }, (_, i) => this.bb.readInt32(v.start + 4 * i));
  }

  u64s(slot: number): bigint[] {
    const v = this.vector(slot);
    return v === null
      ? []
      : Array.from({ length: v.length }, (_, i) => this.bb.readUint64(v.start + 8 * i));
  }

  bytes(slot: number): Uint8Array {
    const v = this.vector(slot);
    return v === null ? new Uint8Array(0) : this.bb.bytes().subarray(v.start, v.start + v.length);
  }
}
