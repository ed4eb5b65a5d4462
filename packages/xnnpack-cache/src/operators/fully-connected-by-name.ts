import { type NamedWeightsCacheProvider, NOT_FOUND } from '../cache/provider.js';
import { invalidArgument } from '../errors.js';
import {
  createWithWeights,
  type FullyConnectedOperator,
  type FullyConnectedSettings,
  operatorAt,
} from './fully-connected.js';
import { type OperatorSetup, operatorSetup } from './operator-setup.js';

/** FullyConnectedOptions with the weights given by the names the cache loads them under. */
export interface FullyConnectedByNameOptions extends Omit<FullyConnectedSettings, 'cache'> {
  readonly cache: NamedWeightsCacheProvider;
  /** Name of the kernel [outputChannels][inputChannels] for `cache.loadUnpackedData`. */
  readonly kernel: string;
  /** Name of the bias [outputChannels], or null/omitted. */
  readonly bias?: string | null;
}

/** The settings of a layer whose packed entry is looked up by the entry's name. */
export interface FullyConnectedEntryOptions extends Omit<FullyConnectedSettings, 'cache'> {
  readonly cache: NamedWeightsCacheProvider;
  /**
   * The name of the layer's cache entry: its kernel's name followed by its bias's name (as
   * ExecuTorch names the entry of a pair), or the kernel's name alone.
   */
  readonly entryName: string;
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
  checkNames(options);
  const setup = operatorSetup(options);
  const offset = lookUpLayer(options.cache, options.kernel, options.bias ?? null, setup);
  if (offset !== NOT_FOUND) return operatorAt(options.cache, setup, offset, true);
  return packWithViews(options, setup);
}

/**
 * createFullyConnectedNcF32ByName for a layer that findFullyConnectedNcF32ByName (or
 * …ByEntryName) did not find: its views are loaded and it is created as
 * createFullyConnectedNcF32 creates it (the look-up by views counts the miss, or finds an
 * entry a cache without lookUpByName holds), without looking it up by name again.
 */
export function createMissedFullyConnectedNcF32ByName(
  options: FullyConnectedByNameOptions,
): FullyConnectedOperator {
  checkNames(options);
  return packWithViews(options, operatorSetup(options));
}

/** Loads a layer's views and creates its operator through them (packing on a miss). */
function packWithViews(
  options: FullyConnectedByNameOptions,
  setup: OperatorSetup,
): FullyConnectedOperator {
  const { cache } = options;
  const bias = options.bias ?? null;
  const kernelView = cache.loadUnpackedData(options.kernel);
  const biasView = bias === null ? null : cache.loadUnpackedData(bias);
  return createWithWeights(cache, kernelView, biasView, setup);
}

/**
 * The first half of createFullyConnectedNcF32ByName: the offset of the packed entry that
 * serves this layer (a hit, counted and held by the build as lookUpByName holds it), or
 * NOT_FOUND with nothing counted (a miss, or a cache without lookUpByName: create the
 * operator with createMissedFullyConnectedNcF32ByName then). A caller that runs few of its
 * layers soon can find them all and make each operator when first needed
 * (fullyConnectedNcF32At).
 */
export function findFullyConnectedNcF32ByName(options: FullyConnectedByNameOptions): number {
  checkNames(options);
  const { cache, kernel, bias } = options;
  return lookUpLayer(cache, kernel, bias ?? null, operatorSetup(options));
}

/**
 * findFullyConnectedNcF32ByName for a caller that keeps the entry's name (kernel name + bias
 * name) rather than the two names: the look-up needs no join. A miss is NOT_FOUND with
 * nothing counted; create the operator by its tensor names then.
 */
export function findFullyConnectedNcF32ByEntryName(options: FullyConnectedEntryOptions): number {
  const { cache, entryName } = options;
  if (typeof entryName !== 'string') invalidArgument('an entry name', 'entryName', entryName);
  // The entry of a kernel and a bias is named by their joined names: looked up as one name.
  return lookUpLayer(cache, entryName, null, operatorSetup(options));
}

/**
 * The operator over the entry at `offset`, which findFullyConnectedNcF32ByName (or
 * …ByEntryName) returned for the same settings. The entry is checked again: one smaller
 * than the layer's packed layout is ERR_CACHE_ENTRY_TOO_SMALL, an offset the cache does not
 * hold ERR_CACHE_INVALID_OFFSET.
 */
export function fullyConnectedNcF32At(
  options: Omit<FullyConnectedEntryOptions, 'entryName'>,
  offset: number,
): FullyConnectedOperator {
  return operatorAt(options.cache, operatorSetup(options), offset, true);
}

function checkNames({ kernel, bias }: FullyConnectedByNameOptions): void {
  if (typeof kernel !== 'string') invalidArgument('a tensor name', 'kernel', kernel);
  if (bias != null && typeof bias !== 'string') {
    invalidArgument('a tensor name or null', 'bias', bias);
  }
}

/** lookUpByName for a layer's names and shape (NOT_FOUND when the cache has no such call). */
function lookUpLayer(
  cache: NamedWeightsCacheProvider,
  kernelName: string,
  biasName: string | null,
  setup: OperatorSetup,
): number {
  if (cache.lookUpByName === undefined) return NOT_FOUND;
  return cache.lookUpByName(kernelName, biasName, setup.plan.shapeKey);
}
