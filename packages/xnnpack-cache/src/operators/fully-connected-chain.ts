// Fully-connected operators run one after another in one call to the native kernels
// (@memlayer/mmap-native prepareGemmChainF32), each one's output the next one's input: a
// model's chain of layers without a JavaScript call and a crossing into the addon per
// layer. Each layer runs as its operator's `run` does, so the outputs are the same bits.
import type { PreparedGemmChainF32 } from '@memlayer/mmap-native';
import type { WeightsCacheProvider } from '../cache/provider.js';
import { invalidArgument } from '../errors.js';
import {
  assertFinalized,
  checkRegion,
  checkRun,
  type FullyConnectedOperator,
  type NativeLayer,
  nativeLayerOf,
  overlaps,
} from './fully-connected.js';

/** Operators run as one: input [batchSize][inputChannels] → [batchSize][outputChannels]. */
export interface FullyConnectedChain {
  /** The first operator's input channels. */
  readonly inputChannels: number;
  /** The last operator's output channels. */
  readonly outputChannels: number;
  /** How many operators it runs. */
  readonly layerCount: number;
  /**
   * Runs every operator in turn on `batchSize` rows, the result written into `output` when
   * given: the bits of running each operator's `run` on the one before's output.
   */
  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array;
}

/**
 * The operators (each one's inputChannels the outputChannels of the one before) as one
 * chain, or null when one of them runs the JavaScript kernel (no addon, or kernels:
 * 'javascript') or a cache of theirs is not finalized: run them one by one then.
 */
export function fullyConnectedChain(
  operators: readonly FullyConnectedOperator[],
): FullyConnectedChain | null {
  if (!Array.isArray(operators) || operators.length === 0) {
    invalidArgument('a non-empty array of fully-connected operators', 'operators', operators);
  }
  const layers: NativeLayer[] = [];
  for (let i = 0; i < operators.length; i++) {
    const layer = nativeLayerOf(operators[i] as FullyConnectedOperator);
    if (layer === null) return null;
    const before = layers[i - 1];
    if (before !== undefined && layer.layout.kc !== before.layout.nc) {
      invalidArgument(
        `${before.layout.nc} input channels (the output channels of operators[${i - 1}])`,
        `operators[${i}].inputChannels`,
        layer.layout.kc,
      );
    }
    layers.push(layer);
  }
  const caches = [...new Set(layers.map((layer) => layer.cache))];
  if (!caches.every((cache) => cache.isFinalized())) return null;
  return new NativeChain(layers, caches);
}

class NativeChain implements FullyConnectedChain {
  readonly inputChannels: number;
  readonly outputChannels: number;
  readonly layerCount: number;
  readonly #layers: readonly NativeLayer[];
  readonly #caches: readonly WeightsCacheProvider[];
  /** Each layer's packed view the native chain reads. */
  readonly #views: Uint8Array[];
  #native: PreparedGemmChainF32 | null = null;

  constructor(layers: readonly NativeLayer[], caches: readonly WeightsCacheProvider[]) {
    this.#layers = layers;
    this.#caches = caches;
    this.#views = new Array<Uint8Array>(layers.length);
    this.inputChannels = (layers[0] as NativeLayer).layout.kc;
    this.outputChannels = (layers[layers.length - 1] as NativeLayer).layout.nc;
    this.layerCount = layers.length;
  }

  run(input: Float32Array, batchSize: number, output?: Float32Array): Float32Array {
    for (const cache of this.#caches) assertFinalized(cache);
    const kc = this.inputChannels;
    const y = checkRun(input, batchSize, output, kc, this.outputChannels);
    const native = this.#nativeChain();
    // As an operator's run: an output over the input reads a copy of the input.
    const x = overlaps(input, batchSize * kc, y, batchSize * this.outputChannels)
      ? input.slice(0, batchSize * kc)
      : input;
    native.run(x, batchSize, y);
    return y;
  }

  /**
   * The native chain over each layer's current view. Looked up at every run, as each
   * operator's run does (the cache may hand back another mapping of an entry over time):
   * the chain is made again when one changed.
   */
  #nativeChain(): PreparedGemmChainF32 {
    const layers = this.#layers;
    const views = this.#views;
    let native = this.#native;
    let changed = native === null;
    for (let i = 0; i < layers.length; i++) {
      const layer = layers[i] as NativeLayer;
      const bytes = layer.cache.offsetToAddr(layer.offset);
      if (bytes !== views[i]) {
        checkRegion(bytes, layer.layout);
        views[i] = bytes;
        changed = true;
      }
    }
    if (changed || native === null) {
      const kernels = (layers[0] as NativeLayer).kernels;
      native = kernels.prepareGemmChainF32(
        layers.map((layer, i) => ({ gemm: layer.gemm, packed: views[i] as Uint8Array })),
      );
      this.#native = native;
    }
    return native;
  }
}
