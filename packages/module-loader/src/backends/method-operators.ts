import type {
  FullyConnectedEntryOptions,
  FullyConnectedOperator,
  fullyConnectedNcF32At,
} from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';

/** What an operator over a found entry is made with: the layer's settings, no names. */
export type LayerSettings = Omit<FullyConnectedEntryOptions, 'entryName'>;

/** An offset slot with no entry found: the node's operator, if any, was made at once. */
const NONE = -1;

/**
 * A method's fully-connected operators by node index, read as a ReadonlyMap. A layer the
 * cache already held is recorded by its entry's offset and its operator is made when first
 * asked for: a warm start finds every layer but needs the operator objects only when the
 * method runs. A layer that had to be packed keeps the operator made then.
 */
export class MethodOperators implements ReadonlyMap<number, FullyConnectedOperator> {
  readonly #made: (FullyConnectedOperator | undefined)[];
  /**
   * Offset of the entry found for each node, NONE where there is none. A plain array: a
   * typed array's backing store, allocated while the cache's freshly mapped windows are
   * young, starts a collection (V8 collects the young generation before a new backing store
   * once its external bytes pass twice the semi-space size).
   */
  readonly #offsets: number[];
  /** The settings node `index` was found with. */
  readonly #settingsOf: (index: number) => LayerSettings;
  /** Nodes with an operator, made or found, in node order. */
  #nodes: number[] = [];
  /** xnnpack-cache's fullyConnectedNcF32At, taken once: a deferred module's look-up is a require. */
  readonly #operatorAt: typeof fullyConnectedNcF32At;

  constructor(nodes: number, settingsOf: (index: number) => LayerSettings) {
    this.#made = new Array(nodes);
    this.#offsets = new Array<number>(nodes).fill(NONE);
    this.#settingsOf = settingsOf;
    this.#operatorAt = xnnpackCache().fullyConnectedNcF32At;
  }

  /** Node `index`'s layer was found at `offset`: its operator is made when first read. */
  found(index: number, offset: number): void {
    this.#offsets[index] = offset;
    this.#nodes.push(index);
  }

  /** Node `index`'s operator, made now (its layer was packed). */
  made(index: number, operator: FullyConnectedOperator): void {
    this.#made[index] = operator;
    this.#nodes.push(index);
  }

  get size(): number {
    return this.#nodes.length;
  }

  get(index: number): FullyConnectedOperator | undefined {
    const made = this.#made[index];
    if (made !== undefined) return made;
    const offset = this.#offsets[index];
    if (offset === undefined || offset === NONE) return undefined;
    const operator = this.#operatorAt(this.#settingsOf(index), offset);
    this.#made[index] = operator;
    return operator;
  }

  has(index: number): boolean {
    return this.#made[index] !== undefined || (this.#offsets[index] ?? NONE) !== NONE;
  }

  /** Drops every operator (the method was destroyed). */
  clear(): void {
    this.#made.fill(undefined);
    this.#offsets.fill(NONE);
    this.#nodes = [];
  }

  entries(): MapIterator<[number, FullyConnectedOperator]> {
    return this.#all().entries();
  }

  /** The nodes with an operator (none is made for this). */
  keys(): MapIterator<number> {
    return new Map(this.#nodes.map((index) => [index, index])).keys();
  }

  values(): MapIterator<FullyConnectedOperator> {
    return this.#all().values();
  }

  [Symbol.iterator](): MapIterator<[number, FullyConnectedOperator]> {
    return this.#all().entries();
  }

  forEach(
    callback: (
      value: FullyConnectedOperator,
      key: number,
      map: ReadonlyMap<number, FullyConnectedOperator>,
    ) => void,
    thisArg?: unknown,
  ): void {
    for (const [index, operator] of this.#all()) callback.call(thisArg, operator, index, this);
  }

  /** Every operator by node, each made if it was not yet (for iteration). */
  #all(): Map<number, FullyConnectedOperator> {
    const all = new Map<number, FullyConnectedOperator>();
    for (const index of this.#nodes) all.set(index, this.get(index) as FullyConnectedOperator);
    return all;
  }
}
