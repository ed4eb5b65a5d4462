import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import type { NodeKeyColumns } from '../backends/node-keys.js';
import type { GraphMethodManifest, GraphNode } from '../program/manifest.js';
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
  /** The method and keys the tensors come from, listed at the first look-up (see plan()). */
  #planned: { method: GraphMethodManifest; keys: NodeKeyColumns } | null = null;
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

  /**
   * The planned tensors are each linear node's kernel, then its bias, in graph order, with
   * the keys and features of `keys`. They are listed when first asked for: a start whose
   * every layer hits the cache never asks.
   */
  plan(method: GraphMethodManifest, keys: NodeKeyColumns): void {
    this.#planned = { method, keys };
  }

  /** Lists the planned tensors (once): key, the program's name for it, and shape. */
  #list(): void {
    const planned = this.#planned;
    if (planned === null) return;
    this.#planned = null;
    const { method, keys } = planned;
    // Models repeat a few shapes over many layers: consecutive nodes of one shape share its
    // shape arrays (views' shapes are read-only).
    let kernelShape: readonly number[] = [];
    let biasShape: readonly number[] = [];
    for (let index = 0; index < method.graph.length; index++) {
      const kernel = keys.kernels[index];
      if (kernel === undefined) continue;
      const node = method.graph[index] as Extract<GraphNode, { op: 'linear' }>;
      const out = keys.outFeatures[index] as number;
      const inputs = keys.inFeatures[index] as number;
      if (kernelShape[0] !== out || kernelShape[1] !== inputs) {
        kernelShape = [out, inputs];
        biasShape = [out];
      }
      this.#add(kernel, node.weight, kernelShape);
      const bias = keys.biases[index];
      if (bias !== null && bias !== undefined) this.#add(bias, node.bias as string, biasShape);
    }
  }

  #add(key: string, name: string, shape: readonly number[]): void {
    this.#keys.add(key);
    this.#names.push(name);
    this.#shapes.push(shape);
  }

  get(key: string): TensorView | undefined {
    this.#list();
    const at = this.#keys.find(key);
    if (at < 0) return undefined;
    return new PlannedTensorView(key, this.#shapes[at] as readonly number[], this, at);
  }

  names(): Iterable<string> {
    this.#list();
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
