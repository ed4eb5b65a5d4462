import { WeightsCacheError } from './errors.js';

/** An unpacked f32 tensor as stored in a program's named data (row-major). */
export interface TensorView {
  readonly name: string;
  readonly dtype: 'f32';
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/**
 * Source of unpacked weights for one runtime build (ExecuTorch's NamedDataMap).
 * The cache identifies a tensor by the identity of the view object `get` returns.
 */
export interface NamedDataMap {
  get(name: string): TensorView | undefined;
  names(): Iterable<string>;
  /**
   * Called by finalizeForRuntime for every view loaded during the build: unpacked
   * data does not survive finalize (a file-backed map may unmap or free it here).
   */
  release?(view: TensorView): void;
}

/** A NamedDataMap over tensors held in memory; `get` returns the same view each time. */
export class InMemoryNamedDataMap implements NamedDataMap {
  readonly #views = new Map<string, TensorView>();

  constructor(tensors: Iterable<TensorView> = []) {
    for (const view of tensors) this.set(view);
  }

  /** Adds a tensor; its element count must match its shape. */
  set(view: TensorView): this {
    const elements = view.shape.reduce((product, dim) => product * dim, 1);
    if (elements !== view.data.length) {
      throw new WeightsCacheError(
        'ERR_CACHE_INVALID_ARGUMENT',
        `Expected ${elements} elements for tensor "${view.name}" of shape [${view.shape.join(', ')}] but received ${view.data.length}`,
      );
    }
    this.#views.set(view.name, view);
    return this;
  }

  get(name: string): TensorView | undefined {
    return this.#views.get(name);
  }

  names(): Iterable<string> {
    return this.#views.keys();
  }
}

export function tensorView(name: string, shape: readonly number[], data: Float32Array): TensorView {
  return { name, dtype: 'f32', shape: [...shape], data };
}
