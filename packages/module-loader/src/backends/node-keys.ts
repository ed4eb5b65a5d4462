/** The keys a linear node's tensors go by in the cache. */
export interface NodeKeys {
  kernel: string;
  bias: string | null;
}

/**
 * The keys of a method's linear nodes as two columns indexed by node (undefined kernel: not
 * a linear node), read as a ReadonlyMap of node index → NodeKeys (the map is made only when
 * iterated).
 */
export class NodeKeyColumns implements ReadonlyMap<number, NodeKeys> {
  #all: Map<number, NodeKeys> | null = null;

  /**
   * `kernels`: each node's kernel key (undefined: not a linear node); `biases`: each linear
   * node's bias key (null: none); `size`: the linear nodes. A linear node's kernel is
   * [outFeatures, inFeatures]; `inFeatures` is 0 for other nodes (`outFeatures` may hold
   * their output width).
   */
  constructor(
    readonly kernels: readonly (string | undefined)[],
    readonly biases: readonly (string | null)[],
    readonly size: number,
    readonly outFeatures: Int32Array,
    readonly inFeatures: Int32Array,
  ) {}

  get(node: number): NodeKeys | undefined {
    const kernel = this.kernels[node];
    if (kernel === undefined) return undefined;
    return { kernel, bias: this.biases[node] ?? null };
  }

  has(node: number): boolean {
    return this.kernels[node] !== undefined;
  }

  entries(): MapIterator<[number, NodeKeys]> {
    return this.#map().entries();
  }

  keys(): MapIterator<number> {
    return this.#map().keys();
  }

  values(): MapIterator<NodeKeys> {
    return this.#map().values();
  }

  [Symbol.iterator](): MapIterator<[number, NodeKeys]> {
    return this.#map().entries();
  }

  forEach(
    callback: (value: NodeKeys, key: number, map: ReadonlyMap<number, NodeKeys>) => void,
    thisArg?: unknown,
  ): void {
    for (const [node, keys] of this.#map()) callback.call(thisArg, keys, node, this);
  }

  /** The whole map, for iteration (made once, on the first iteration). */
  #map(): Map<number, NodeKeys> {
    if (this.#all === null) {
      const all = new Map<number, NodeKeys>();
      for (let node = 0; node < this.kernels.length; node++) {
        const keys = this.get(node);
        if (keys !== undefined) all.set(node, keys);
      }
      this.#all = all;
    }
    return this.#all;
  }
}
