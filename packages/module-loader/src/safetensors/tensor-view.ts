import type { TensorView } from '@memlayer/xnnpack-cache';
import type { SafetensorsFile } from './file.js';
import type { SafetensorsTensorInfo } from './header.js';

/**
 * An f32 view of one tensor. `data` is a getter: the file is opened and mapped only when a
 * caller reads it (a layer that missed the cache), never for a cache hit.
 */
export class MappedTensorView implements TensorView {
  readonly dtype = 'f32' as const;
  /** Position of the tensor in `owner.table`. */
  readonly index: number;
  /** Read by every user of a view (a cache hit included): a plain field, set at creation. */
  readonly shape: readonly number[];
  readonly info: SafetensorsTensorInfo;
  #floats: Float32Array | null = null;

  constructor(
    readonly name: string,
    info: SafetensorsTensorInfo | undefined,
    readonly owner: SafetensorsFile,
    index?: number,
  ) {
    this.index = index ?? owner.table.indexOf(name);
    this.info = info ?? owner.table.info(this.index);
    this.shape = this.info.shape;
  }

  get data(): Float32Array {
    const floats = this.#floats;
    // A detached view (window unmapped after release) is fetched again.
    if (floats !== null && (floats.byteLength > 0 || this.info.byteLength === 0)) {
      return floats;
    }
    this.#floats = this.owner.floatsOf(this);
    return this.#floats;
  }

  /** @internal Forget the floats (their window may be unmapped next). */
  drop(): void {
    this.#floats = null;
  }
}
