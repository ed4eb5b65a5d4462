import type { SafetensorsTensorInfo } from './header.js';

/**
 * A weight file's tensor table as its header lists it, with the SHA-256 of each tensor
 * hashed so far by this load (a tensor two nodes share is hashed once). The name index is
 * built only when a name is looked up in this file.
 */
export class TensorTable {
  readonly #infos: readonly SafetensorsTensorInfo[];
  readonly #digests: (string | undefined)[];
  #index: Map<string, number> | null = null;

  constructor(infos: readonly SafetensorsTensorInfo[]) {
    this.#infos = infos;
    this.#digests = new Array(infos.length);
  }

  get size(): number {
    return this.#infos.length;
  }

  /** Index of a tensor by name, or -1 (the index is built on the first call). */
  indexOf(name: string): number {
    let index = this.#index;
    if (index === null) {
      index = new Map();
      for (let i = 0; i < this.#infos.length; i++) index.set(this.info(i).name, i);
      this.#index = index;
    }
    return index.get(name) ?? -1;
  }

  /** The info of tensor i, as the header gave it. */
  info(i: number): SafetensorsTensorInfo {
    return this.#infos[i] as SafetensorsTensorInfo;
  }

  /** Every tensor's info, in table order. */
  infos(): readonly SafetensorsTensorInfo[] {
    return this.#infos;
  }

  /** Lower-case hex SHA-256 of tensor i, when this load has hashed it. */
  digest(i: number): string | undefined {
    return this.#digests[i];
  }

  setDigest(i: number, hex: string): void {
    this.#digests[i] = hex;
  }
}
