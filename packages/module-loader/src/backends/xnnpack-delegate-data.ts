import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { PteProgram } from '../pte/pte-program.js';
import { XNN_INVALID_ID, XNODE_FULLY_CONNECTED, type XnnGraph } from '../pte/xnn-graph.js';
import { sha256Hex } from '../safetensors/digest.js';
import { dimOf, rankOf } from './xnnpack-delegate-checks.js';

/**
 * The key of constant value `value`: its named key, or for a constant stored by offset
 * (older programs) the SHA-256 of its bytes, computed here.
 */
export function constantKey(graph: XnnGraph, value: number): string {
  const index = graph.constantIndex[value] as number;
  return graph.constantKey(index) ?? sha256Hex(graph.constantBytes(index));
}

/**
 * The delegate's constants as the weights cache reads them on a miss: f32 views of the
 * mapped .pte/.ptd by key. Each is hashed when read and must match its key: a warm start
 * never reads them, a cold start reads each once to pack it.
 */
export class DelegateDataMap implements NamedDataMap {
  readonly #graph: XnnGraph;
  readonly #program: PteProgram;
  readonly #method: string;
  /** Value id of each constant key, made on the first miss. */
  #valueOf: Map<string, number> | null = null;

  constructor(graph: XnnGraph, program: PteProgram, method: string) {
    this.#graph = graph;
    this.#program = program;
    this.#method = method;
  }

  get(key: string): TensorView | undefined {
    const value = this.#values().get(key);
    if (value === undefined) return undefined;
    const graph = this.#graph;
    const index = graph.constantIndex[value] as number;
    const named = graph.constantKey(index);
    const bytes =
      named === null ? graph.constantBytes(index) : this.#program.namedBytes(named, this.#method);
    const shape =
      rankOf(graph, value) === 2
        ? [dimOf(graph, value, 0), dimOf(graph, value, 1)]
        : [dimOf(graph, value, 0)];
    const elements = shape.reduce((product, dim) => product * dim, 1);
    if (bytes.byteLength !== 4 * elements) {
      throw new ModuleLoaderError(
        'ERR_CONSTANT_MISMATCH',
        `${this.#program.path}: constant "${key}" has ${bytes.byteLength} bytes; its value [${shape.join(', ')}] needs ${4 * elements}`,
        { file: this.#program.path, field: key },
      );
    }
    if (named !== null && sha256Hex(bytes) !== named) {
      throw new ModuleLoaderError(
        'ERR_CONSTANT_MISMATCH',
        `${this.#program.path}: the bytes of constant "${named}" do not hash to its key (the program or its data file was changed)`,
        { file: this.#program.path, field: named },
      );
    }
    // Segments are 16-byte aligned; a view at another offset is copied to be read as f32.
    const data =
      bytes.byteOffset % 4 === 0
        ? new Float32Array(bytes.buffer, bytes.byteOffset, elements)
        : new Float32Array(bytes.slice().buffer);
    return xnnpackCache().tensorView(key, shape, data);
  }

  names(): Iterable<string> {
    return this.#values().keys();
  }

  #values(): Map<string, number> {
    if (this.#valueOf === null) {
      const graph = this.#graph;
      const values = new Map<string, number>();
      for (let n = 0; n < graph.nodeCount; n++) {
        if (graph.nodeType[n] !== XNODE_FULLY_CONNECTED) continue;
        const filter = graph.nodeFilter[n] as number;
        const bias = graph.nodeBias[n] as number;
        values.set(constantKey(graph, filter), filter);
        if (bias !== XNN_INVALID_ID) values.set(constantKey(graph, bias), bias);
      }
      this.#valueOf = values;
    }
    return this.#valueOf;
  }
}
