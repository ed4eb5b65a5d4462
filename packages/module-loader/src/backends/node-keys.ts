import { kernelKeyEnd } from '../safetensors/digest.js';

/** The keys a linear node's tensors go by in the cache. */
export interface NodeKeys {
  kernel: string;
  bias: string | null;
}

/**
 * The keys of a method's linear nodes as two columns indexed by node (undefined kernel: not
 * a linear node), read as a ReadonlyMap of node index → NodeKeys. A warm start keys every
 * layer but rarely reads the map: its entry objects are made only when read. Keys from a
 * method plan come as one entry name per node (kernel key + bias key, the name the cache
 * looks up): the two columns are split from them only when first read.
 */
export class NodeKeyColumns implements ReadonlyMap<number, NodeKeys> {
  #all: Map<number, NodeKeys> | null = null;
  #kernels: readonly (string | undefined)[] | null;
  #biases: readonly (string | null)[] | null;

  /**
   * `size`: the linear nodes (kernels set). A linear node's kernel is
   * [outFeatures, inFeatures]; `inFeatures` is 0 for other nodes (`outFeatures` may hold
   * their output width). `entryNames`, when the keys came as entry names: each linear
   * node's (undefined for other nodes), and `kernels` and `biases` are null until read.
   */
  constructor(
    kernels: readonly (string | undefined)[] | null,
    biases: readonly (string | null)[] | null,
    readonly size: number,
    readonly outFeatures: Int32Array,
    readonly inFeatures: Int32Array,
    readonly entryNames?: readonly (string | undefined)[],
  ) {
    this.#kernels = kernels;
    this.#biases = biases;
  }

  /** Each node's kernel key (undefined: not a linear node). */
  get kernels(): readonly (string | undefined)[] {
    if (this.#kernels === null) this.#split();
    return this.#kernels as readonly (string | undefined)[];
  }

  /** Each linear node's bias key (null: none). */
  get biases(): readonly (string | null)[] {
    if (this.#biases === null) this.#split();
    return this.#biases as readonly (string | null)[];
  }

  /** The two key columns from the entry names (checked by keysFromPlan: isEntryName). */
  #split(): void {
    const names = this.entryNames ?? [];
    const kernels = new Array<string | undefined>(names.length);
    const biases = new Array<string | null>(names.length);
    for (let node = 0; node < names.length; node++) {
      const name = names[node];
      if (name === undefined) continue;
      const end = kernelKeyEnd(name);
      kernels[node] = end === name.length ? name : name.slice(0, end);
      biases[node] = end === name.length ? null : name.slice(end);
    }
    this.#kernels = kernels;
    this.#biases = biases;
  }

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
