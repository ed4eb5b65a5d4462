import type { SafetensorsDtype } from './dtypes.js';
import type { SafetensorsTensorInfo } from './header.js';

/** A tensor table as plain columns, one entry per tensor (shapes: sizes in `dims`). */
export interface TensorColumns {
  readonly names: readonly string[];
  readonly dtypes: readonly SafetensorsDtype[];
  readonly fileOffsets: ArrayLike<number>;
  readonly byteLengths: ArrayLike<number>;
  /** Tensor i's shape is the ranks[i] sizes from dims[shapeStarts[i]]. */
  readonly ranks: Uint8Array;
  readonly shapeStarts: Uint32Array;
  readonly dims: ArrayLike<number>;
}

/** Hex digits of one SHA-256. */
const DIGEST_HEX = 64;
/** '1': the tensor at this position of a recorded `hashed` string has a digest. */
const HASHED = 49;

/**
 * A weight file's tensor table as columns, with the SHA-256 of each tensor hashed so far.
 * A warm start goes through tens of thousands of tensors: the info object (and its shape
 * array) of a tensor is made only when asked for, the name index only when a name is looked
 * up in this file, and a recorded digest is sliced out of the file's hex string on first use.
 */
export class TensorTable implements TensorColumns {
  readonly names: readonly string[];
  readonly dtypes: readonly SafetensorsDtype[];
  readonly fileOffsets: ArrayLike<number>;
  readonly byteLengths: ArrayLike<number>;
  readonly ranks: Uint8Array;
  readonly shapeStarts: Uint32Array;
  readonly dims: ArrayLike<number>;
  /**
   * Recorded digests as one hex string, 64 digits per tensor (meaningful where `#recorded[i]`
   * is '1'): one hex encoding per file, then a slice per tensor on first use.
   */
  readonly #recordedHex: string;
  readonly #recorded: string;
  readonly #digests: (string | undefined)[];
  readonly #infos: (SafetensorsTensorInfo | undefined)[];
  #index: Map<string, number> | null = null;
  #digestCount = 0;

  constructor(
    columns: TensorColumns,
    recorded: { hex: string; hashed: string } | null = null,
    infos: readonly SafetensorsTensorInfo[] | null = null,
  ) {
    this.names = columns.names;
    this.dtypes = columns.dtypes;
    this.fileOffsets = columns.fileOffsets;
    this.byteLengths = columns.byteLengths;
    this.ranks = columns.ranks;
    this.shapeStarts = columns.shapeStarts;
    this.dims = columns.dims;
    this.#recordedHex = recorded?.hex ?? '';
    this.#recorded = recorded?.hashed ?? '';
    this.#digests = new Array(columns.names.length);
    // Infos given are kept as they are (never changed: only missing ones are filled in).
    this.#infos =
      infos === null ? new Array(columns.names.length) : (infos as SafetensorsTensorInfo[]);
    // Usually every tensor was hashed: then no per-tensor count.
    const flags = this.#recorded;
    if (flags.indexOf('0') < 0) this.#digestCount = flags.length;
    else for (let i = 0; i < flags.length; i++) this.#digestCount += +(flags[i] === '1');
  }

  /** The table of a parsed header (with digests already known, e.g. from another source). */
  static fromInfos(
    infos: readonly SafetensorsTensorInfo[],
    digests?: ReadonlyMap<string, string>,
  ): TensorTable {
    const n = infos.length;
    const fileOffsets = new Float64Array(n);
    const byteLengths = new Float64Array(n);
    const ranks = new Uint8Array(n);
    const shapeStarts = new Uint32Array(n);
    let rankSum = 0;
    for (let i = 0; i < n; i++) rankSum += (infos[i] as SafetensorsTensorInfo).shape.length;
    const dims = new Float64Array(rankSum);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const info = infos[i] as SafetensorsTensorInfo;
      fileOffsets[i] = info.fileOffset;
      byteLengths[i] = info.byteLength;
      ranks[i] = info.shape.length;
      shapeStarts[i] = at;
      for (const size of info.shape) dims[at++] = size;
    }
    const table = new TensorTable(
      {
        names: infos.map((info) => info.name),
        dtypes: infos.map((info) => info.dtype),
        fileOffsets,
        byteLengths,
        ranks,
        shapeStarts,
        dims,
      },
      null,
      infos,
    );
    if (digests !== undefined && digests.size > 0) {
      for (let i = 0; i < n; i++) {
        const digest = digests.get((infos[i] as SafetensorsTensorInfo).name);
        if (digest !== undefined) table.setDigest(i, digest);
      }
    }
    return table;
  }

  get size(): number {
    return this.names.length;
  }

  /** Tensors whose digest is known. */
  get digestCount(): number {
    return this.#digestCount;
  }

  /** Index of a tensor by name, or -1 (the index is built on the first call). */
  indexOf(name: string): number {
    let index = this.#index;
    if (index === null) {
      index = new Map();
      for (let i = 0; i < this.names.length; i++) index.set(this.names[i] as string, i);
      this.#index = index;
    }
    return index.get(name) ?? -1;
  }

  /** The info of tensor i: one object per tensor, made on first use. */
  info(i: number): SafetensorsTensorInfo {
    const cached = this.#infos[i];
    if (cached !== undefined) return cached;
    const info: SafetensorsTensorInfo = {
      name: this.names[i] as string,
      dtype: this.dtypes[i] as SafetensorsDtype,
      shape: this.shapeOf(i),
      fileOffset: this.fileOffsets[i] as number,
      byteLength: this.byteLengths[i] as number,
    };
    this.#infos[i] = info;
    return info;
  }

  /** Tensor i's shape as a fresh array (the info is neither made nor kept). */
  shapeOf(i: number): number[] {
    const start = this.shapeStarts[i] as number;
    const end = start + (this.ranks[i] as number);
    const shape: number[] = [];
    for (let at = start; at < end; at++) shape.push(this.dims[at] as number);
    return shape;
  }

  /** Every tensor's info, in table order. */
  infos(): SafetensorsTensorInfo[] {
    const out: SafetensorsTensorInfo[] = new Array(this.names.length);
    for (let i = 0; i < out.length; i++) out[i] = this.info(i);
    return out;
  }

  /** Lower-case hex SHA-256 of tensor i, when known. */
  digest(i: number): string | undefined {
    const known = this.#digests[i];
    if (known !== undefined || this.#recorded.charCodeAt(i) !== HASHED) return known;
    const digest = this.#recordedHex.slice(i * DIGEST_HEX, (i + 1) * DIGEST_HEX);
    this.#digests[i] = digest;
    return digest;
  }

  setDigest(i: number, hex: string): void {
    if (this.digest(i) === undefined) this.#digestCount++;
    this.#digests[i] = hex;
  }

  /** The known digests by tensor name (a copy). */
  digestMap(): Map<string, string> {
    const out = new Map<string, string>();
    for (let i = 0; i < this.names.length; i++) {
      const digest = this.digest(i);
      if (digest !== undefined) out.set(this.names[i] as string, digest);
    }
    return out;
  }
}
