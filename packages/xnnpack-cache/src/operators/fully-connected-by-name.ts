import { type NamedWeightsCacheProvider, NOT_FOUND } from '../cache/provider.js';
import { invalidArgument } from '../errors.js';
import {
  createWithWeights,
  type FullyConnectedOperator,
  type FullyConnectedSettings,
  operatorAt,
} from './fully-connected.js';
import { operatorSetup } from './operator-setup.js';

/** FullyConnectedOptions with the weights given by the names the cache loads them under. */
export interface FullyConnectedByNameOptions extends Omit<FullyConnectedSettings, 'cache'> {
  readonly cache: NamedWeightsCacheProvider;
  /** Name of the kernel [outputChannels][inputChannels] for `cache.loadUnpackedData`. */
  readonly kernel: string;
  /** Name of the bias [outputChannels], or null/omitted. */
  readonly bias?: string | null;
}

/**
 * createFullyConnectedNcF32 for weights known by name. A cache hit is found from the names
 * and the layer's shape alone: no unpacked view is loaded, so a warm start reads no weights
 * and makes no view per layer. Otherwise (a miss, or a cache without lookUpByName) the
 * views are loaded and the operator is created exactly as createFullyConnectedNcF32 does,
 * which checks the weights' shapes against inputChannels and outputChannels.
 */
export function createFullyConnectedNcF32ByName(
  options: FullyConnectedByNameOptions,
): FullyConnectedOperator {
  const { cache, kernel } = options;
  const bias = options.bias ?? null;
  if (typeof kernel !== 'string') invalidArgument('a tensor name', 'kernel', kernel);
  if (bias !== null && typeof bias !== 'string') {
    invalidArgument('a tensor name or null', 'bias', bias);
  }
  const setup = operatorSetup(options);
  if (cache.lookUpByName !== undefined) {
    const offset = cache.lookUpByName(kernel, bias, setup.plan.shapeKey);
    if (offset !== NOT_FOUND) return operatorAt(cache, setup, offset, true);
  }
  const kernelView = cache.loadUnpackedData(kernel);
  const biasView = bias === null ? null : cache.loadUnpackedData(bias);
  return createWithWeights(cache, kernelView, biasView, setup);
}
