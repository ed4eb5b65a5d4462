// A bounds-checked flatbuffer reader. The flatbuffers runtime for JavaScript has no
// verifier: it reads whatever offsets a file holds. Programs come from disk, so every
// offset, vtable and vector here is checked against the buffer before it is read, and
// any problem is the caller's typed error (never an out-of-bounds read or a RangeError).

/** Throws the caller's error for a malformed buffer; `what` says which field and why. */
export type Malformed = (what: string) => never;

/** A table's position and its vtable, checked. Field slots count from 0. */
export interface Table {
  readonly at: number;
  readonly vtable: number;
  readonly vtableSize: number;
  readonly tableSize: number;
  readonly name: string;
}

/** A vector's element count and the position of its first element. */
export interface Vector {
  readonly start: number;
  readonly length: number;
}

const NO_VECTOR: Vector = { start: 0, length: 0 };

/**
 * The buffer read as aligned words, for the loops over many tables (element reads cost far
 * less than DataView calls in code that runs once). A flatbuffer aligns every scalar to its
 * size from the buffer's start, and the runtime's verifier requires it: rawTable and
 * rawField refuse a misaligned table or field, so `at >> 2` is exact. Little-endian only.
 */
export interface Words {
  readonly u8: Uint8Array;
  readonly u16: Uint16Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
}

export interface TableReader {
  table(at: number, name: string): number;
  field(at: number, slot: number, size: number, name: string): number;
  target(position: number): number;
}

export class FlatBuffer {
  readonly bytes: Uint8Array;
  /** The bytes as words, for reading a field at a position rawField returned. */
  readonly words: Words;
  readonly #view: DataView;
  readonly #malformed: Malformed;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });

  /**
   * `bytes` is the whole flatbuffer (its offsets count from bytes[0]); bytes that do not
   * start on a 4-byte boundary are copied to one that does.
   */
  constructor(bytes: Uint8Array, malformed: Malformed) {
    const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    this.bytes = aligned;
    this.#view = new DataView(aligned.buffer, aligned.byteOffset, aligned.byteLength);
    const { buffer, byteOffset, byteLength } = aligned;
    this.words = {
      u8: aligned,
      u16: new Uint16Array(buffer, byteOffset, byteLength >> 1),
      u32: new Uint32Array(buffer, byteOffset, byteLength >> 2),
      i32: new Int32Array(buffer, byteOffset, byteLength >> 2),
      f32: new Float32Array(buffer, byteOffset, byteLength >> 2),
    };
    this.#malformed = malformed;
  }

  get length(): number {
    return this.bytes.byteLength;
  }

  /**
   * Fails unless [at, at + size) lies inside the buffer. `suffix` is added to `what` in the
   * message only: a hot caller passes two constants rather than building a string per call.
   */
  check(at: number, size: number, what: string, suffix = ''): void {
    if (!(at >= 0 && size >= 0 && at + size <= this.bytes.byteLength)) {
      this.#malformed(
        `${what}${suffix}: bytes ${at}..${at + size} lie outside the ${this.bytes.byteLength} bytes read`,
      );
    }
  }

  u8(at: number): number {
    this.check(at, 1, 'u8');
    return this.#view.getUint8(at);
  }

  u16(at: number): number {
    this.check(at, 2, 'u16');
    return this.#view.getUint16(at, true);
  }

  i32(at: number): number {
    this.check(at, 4, 'i32');
    return this.#view.getInt32(at, true);
  }

  u32(at: number): number {
    this.check(at, 4, 'u32');
    return this.#view.getUint32(at, true);
  }

  f32(at: number): number {
    this.check(at, 4, 'f32');
    return this.#view.getFloat32(at, true);
  }

  /** A u64 as a number; past 2^53 it cannot be an offset or size here, except all-ones. */
  u64(at: number, what: string): number {
    this.check(at, 8, what);
    const low = this.#view.getUint32(at, true);
    const high = this.#view.getUint32(at + 4, true);
    if (high === 0xffffffff && low === 0xffffffff) return Number.POSITIVE_INFINITY;
    if (high > 0x1fffff) this.#malformed(`${what}: ${high * 2 ** 32 + low} is too large`);
    return high * 2 ** 32 + low;
  }

  /** The 4-byte identifier at [4, 8) (a flatbuffer's file_identifier). */
  identifier(): string {
    this.check(0, 8, 'file identifier');
    return String.fromCharCode(...this.bytes.subarray(4, 8));
  }

  /** The root table (its offset is the u32 at byte 0). */
  root(name: string): Table {
    return this.table(this.u32(0), name);
  }

  /** The table at `at`: its vtable (at - soffset) and both sizes are checked. */
  table(at: number, name: string): Table {
    this.check(at, 4, name);
    const vtable = at - this.#view.getInt32(at, true);
    this.check(vtable, 4, name, ' vtable');
    const vtableSize = this.#view.getUint16(vtable, true);
    const tableSize = this.#view.getUint16(vtable + 2, true);
    if (vtableSize < 4 || vtableSize % 2 !== 0)
      this.#malformed(`${name}: vtable size ${vtableSize}`);
    this.check(vtable, vtableSize, name, ' vtable');
    if (tableSize < 4) this.#malformed(`${name}: table size ${tableSize}`);
    this.check(at, tableSize, name);
    return { at, vtable, vtableSize, tableSize, name };
  }

  /**
   * Readers of tables as numbers, for loops over many tables where an object per table (or a
   * property load per read) would cost more than the reads. They close over the words:
   * `table` checks a table and its vtable as table() does and returns its position, `field`
   * gives a field's position (0: absent), aligned to its size and inside its table, and
   * `target` follows a uoffset field.
   */
  tableReader(): TableReader {
    const { u16, u32, i32 } = this.words;
    const length = this.bytes.byteLength;
    const malformed = this.#malformed;
    const misplaced = (at: number, name: string): never =>
      malformed(`${name}: a table at ${at}, misaligned or outside the ${length} bytes read`);
    const table = (at: number, name: string): number => {
      if (!(at >= 0 && at % 4 === 0 && at + 4 <= length)) misplaced(at, name);
      const vtable = at - (i32[at >> 2] as number);
      if (!(vtable >= 0 && vtable % 2 === 0 && vtable + 4 <= length)) misplaced(vtable, name);
      const vtableSize = u16[vtable >> 1] as number;
      const tableSize = u16[(vtable >> 1) + 1] as number;
      if (vtableSize < 4 || vtableSize % 2 !== 0 || vtable + vtableSize > length) {
        malformed(`${name}: vtable size ${vtableSize}`);
      }
      if (tableSize < 4 || at + tableSize > length) malformed(`${name}: table size ${tableSize}`);
      return at;
    };
    const field = (at: number, slot: number, size: number, name: string): number => {
      const vtable = (at - (i32[at >> 2] as number)) >> 1;
      if (2 * slot + 6 > (u16[vtable] as number)) return 0;
      const offset = u16[vtable + 2 + slot] as number;
      if (offset === 0) return 0;
      const position = at + offset;
      if (offset < 4 || offset + size > (u16[vtable + 1] as number) || position % size !== 0) {
        malformed(`${name}: field ${slot} at ${offset}, misaligned or outside the table`);
      }
      return position;
    };
    const target = (position: number): number =>
      position === 0 ? 0 : position + (u32[position >> 2] as number);
    return { table, field, target };
  }

  /** The vector at `at` (its u32 length first) of `elementSize`-byte elements, checked. */
  vectorAt(at: number, elementSize: number, name: string): Vector {
    if (at === 0) return NO_VECTOR;
    if (at % 4 !== 0) this.#malformed(`${name}: a vector at ${at}, misaligned`);
    const length = this.u32(at);
    this.check(at + 4, length * elementSize, name);
    return { start: at + 4, length };
  }

  /** Absolute position of field `slot` of `table`, 0 when absent. */
  field(table: Table, slot: number, size: number): number {
    const entry = 4 + 2 * slot;
    if (entry + 2 > table.vtableSize) return 0;
    const offset = this.#view.getUint16(table.vtable + entry, true);
    if (offset === 0) return 0;
    if (offset < 4 || offset + size > table.tableSize) {
      this.#malformed(`${table.name}: field ${slot} at ${offset} lies outside the table`);
    }
    return table.at + offset;
  }

  fieldU8(table: Table, slot: number, fallback = 0): number {
    const at = this.field(table, slot, 1);
    return at === 0 ? fallback : this.#view.getUint8(at);
  }

  fieldU16(table: Table, slot: number, fallback = 0): number {
    const at = this.field(table, slot, 2);
    return at === 0 ? fallback : this.#view.getUint16(at, true);
  }

  fieldI32(table: Table, slot: number, fallback = 0): number {
    const at = this.field(table, slot, 4);
    return at === 0 ? fallback : this.#view.getInt32(at, true);
  }

  fieldU32(table: Table, slot: number, fallback = 0): number {
    const at = this.field(table, slot, 4);
    return at === 0 ? fallback : this.#view.getUint32(at, true);
  }

  fieldF32(table: Table, slot: number, fallback = 0): number {
    const at = this.field(table, slot, 4);
    return at === 0 ? fallback : this.#view.getFloat32(at, true);
  }

  fieldU64(table: Table, slot: number, what: string, fallback = 0): number {
    const at = this.field(table, slot, 8);
    return at === 0 ? fallback : this.u64(at, what);
  }

  /** Position a field's uoffset points at (0 when the field is absent). */
  #target(table: Table, slot: number): number {
    const at = this.field(table, slot, 4);
    if (at === 0) return 0;
    return at + this.#view.getUint32(at, true);
  }

  /** A sub-table field, or null when absent. */
  fieldTable(table: Table, slot: number, name: string): Table | null {
    const at = this.#target(table, slot);
    return at === 0 ? null : this.table(at, name);
  }

  /** A vector field whose elements are `elementSize` bytes (an empty vector when absent). */
  fieldVector(table: Table, slot: number, elementSize: number, name: string): Vector {
    const at = this.#target(table, slot);
    if (at === 0) return NO_VECTOR;
    const length = this.u32(at);
    this.check(at + 4, length * elementSize, name);
    return { start: at + 4, length };
  }

  /** Element `index` of a vector of tables. */
  tableAt(vector: Vector, index: number, name: string): Table {
    const at = vector.start + 4 * index;
    return this.table(at + this.#view.getUint32(at, true), name);
  }

  /** A string field (UTF-8), or null when absent. */
  fieldString(table: Table, slot: number, name: string): string | null {
    const vector = this.fieldVector(table, slot, 1, name);
    if (vector === NO_VECTOR) return null;
    return this.#text(vector, name);
  }

  /** Element `index` of a vector of strings. */
  stringAt(vector: Vector, index: number, name: string): string {
    const at = vector.start + 4 * index;
    const target = at + this.#view.getUint32(at, true);
    const length = this.u32(target);
    this.check(target + 4, length, name);
    return this.#text({ start: target + 4, length }, name);
  }

  #text(vector: Vector, name: string): string {
    try {
      return this.#decoder.decode(this.bytes.subarray(vector.start, vector.start + vector.length));
    } catch {
      return this.#malformed(`${name}: not UTF-8`);
    }
  }

  /** A vector of u32 (or i32 when `signed`) as numbers. */
  numbers(vector: Vector, signed = false): number[] {
    const values = new Array<number>(vector.length);
    for (let i = 0; i < vector.length; i++) {
      const at = vector.start + 4 * i;
      values[i] = signed ? this.#view.getInt32(at, true) : this.#view.getUint32(at, true);
    }
    return values;
  }

  /** A vector of i64 as numbers (each must be a safe integer). */
  longs(vector: Vector, name: string): number[] {
    const values = new Array<number>(vector.length);
    for (let i = 0; i < vector.length; i++) {
      const at = vector.start + 8 * i;
      const value = this.#view.getBigInt64(at, true);
      if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
        this.#malformed(`${name}[${i}]: ${value} is out of range`);
      }
      values[i] = Number(value);
    }
    return values;
  }
}
