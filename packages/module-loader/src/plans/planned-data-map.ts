import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import type { SafetensorsNamedDataMap } from '../safetensors/named-data.js';
import { OrderedKeys } from '../safetensors/ordered-keys.js';
import type { MappedTensorView } from '../safetensors/tensor-view.js';

/**
 * Thrown when a planned tensor's bytes are read and the weights do not hold what the plan
 * says (another content key or shape): the init that used the plan starts again without it.
 */
export class PlanMismatch extends Error {}

/**
 * The tensors of a method by cache key, as a method plan gives them: keys and shapes are
 * known without reading any weight file. Only a layer that misses the cache reads its data;
 * then (once) the weights are resolved and the tensor's content key and shape are checked
 * against the plan before a byte is handed out (PlanMismatch otherwise). Keys are found as
 * ContentKeyedDataMap finds them (OrderedKeys).
 */
export class PlannedDataMap implements NamedDataMap {
  readonly #keys = new OrderedKeys();
  readonly #names: string[] = [];
  readonly #shapes: (readonly number[])[] = [];
  #resolved = false;

  /** `resolveWeights` learns the weight files' tables (called before the first data read). */
  constructor(
    readonly source: SafetensorsNamedDataMap,
    private readonly resolveWeights: () => void,
  ) {}

  /** Whether a data read made it resolve the weights. */
  get resolved(): boolean {
    return this.#resolved;
  }

  /** Adds the tensor the program calls `name`, planned as `key` of `shape`. */
  add(key: string, name: string, shape: readonly number[]): void {
    this.#keys.add(key);
    this.#names.push(name);
    this.#shapes.push(shape);
  }

  get(key: string): TensorView | undefined {
    const at = this.#keys.find(key);
    if (at < 0) return undefined;
    return new PlannedTensorView(key, this.#shapes[at] as readonly number[], this, at);
  }

  names(): Iterable<string> {
    return this.#keys.names();
  }

  release(view: TensorView): void {
    if (view instanceof PlannedTensorView) view.release(this.source);
  }

  /** @internal The weights' view of planned tensor `at`, checked against the plan. */
  backingOf(at: number): MappedTensorView {
    if (!this.#resolved) {
      this.resolveWeights();
      this.#resolved = true;
    }
    const name = this.#names[at] as string;
    const found = this.source.locate(name);
    if (found === undefined) throw new PlanMismatch(`no tensor "${name}" in the weights`);
    const { file, index } = found;
    const view = file.freshViewAt(index);
    const planned = this.#shapes[at] as readonly number[];
    if (
      view === undefined ||
      file.contentKeyAt(index) !== this.#keys.at(at) ||
      view.shape.length !== planned.length ||
      view.shape.some((size, i) => size !== planned[i])
    ) {
      throw new PlanMismatch(`tensor "${name}" is not what the method plan says`);
    }
    return view;
  }
}

/** A planned tensor: name (its key) and shape from the plan, data read only when asked for. */
class PlannedTensorView implements TensorView {
  readonly dtype = 'f32' as const;
  #backing: MappedTensorView | null = null;

  constructor(
    readonly name: string,
    readonly shape: readonly number[],
    private readonly map: PlannedDataMap,
    private readonly at: number,
  ) {}

  get data(): Float32Array {
    this.#backing ??= this.map.backingOf(this.at);
    return this.#backing.data;
  }

  /** Hands the weights' view (if one was read) back to the weights. */
  release(source: SafetensorsNamedDataMap): void {
    if (this.#backing !== null) source.release(this.#backing);
    this.#backing = null;
  }
}
