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

/**
 * A weight file's tensor table as columns, with the SHA-256 of each tensor hashed so far by
 * this load (a tensor two nodes share is hashed once). The name index is built only when a
 * name is looked up in this file.
 */
export class TensorTable implements TensorColumns {
  readonly names: readonly string[];
  readonly dtypes: readonly SafetensorsDtype[];
  readonly fileOffsets: ArrayLike<number>;
  readonly byteLengths: ArrayLike<number>;
  readonly ranks: Uint8Array;
  readonly shapeStarts: Uint32Array;
  readonly dims: ArrayLike<number>;
  readonly #digests: (string | undefined)[];
  readonly #infos: (SafetensorsTensorInfo | undefined)[];
  #index: Map<string, number> | null = null;

  constructor(columns: TensorColumns, infos: readonly SafetensorsTensorInfo[] | null = null) {
    this.names = columns.names;
    this.dtypes = columns.dtypes;
    this.fileOffsets = columns.fileOffsets;
    this.byteLengths = columns.byteLengths;
    this.ranks = columns.ranks;
    this.shapeStarts = columns.shapeStarts;
    this.dims = columns.dims;
    this.#digests = new Array(columns.names.length);
    // Infos given are kept as they are (never changed: only missing ones are filled in).
    this.#infos =
      infos === null ? new Array(columns.names.length) : (infos as SafetensorsTensorInfo[]);
  }

  /** The table of a parsed header. */
  static fromInfos(infos: readonly SafetensorsTensorInfo[]): TensorTable {
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
    return new TensorTable(
      {
        names: infos.map((info) => info.name),
        dtypes: infos.map((info) => info.dtype),
        fileOffsets,
        byteLengths,
        ranks,
        shapeStarts,
        dims,
      },
      infos,
    );
  }

  get size(): number {
    return this.names.length;
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

  /** Lower-case hex SHA-256 of tensor i, when this load has hashed it. */
  digest(i: number): string | undefined {
    return this.#digests[i];
  }

  setDigest(i: number, hex: string): void {
    this.#digests[i] = hex;
  }
}
