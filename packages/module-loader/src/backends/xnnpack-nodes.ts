// The per-node passes of an XNNPACK init. Each loop lives in a function of its own: V8
// optimizes a hot loop by compiling its whole function on the stack, so a loop inside the
// long init would recompile init once per loop (and deoptimize it after each).
import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  type FullyConnectedOptions,
  type GemmTiling,
  type XNNWeightsCache,
} from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { GraphMethodManifest, GraphNode } from '../program/manifest.js';
import { FLOAT_DTYPES } from '../safetensors/dtypes.js';
import type { ContentKeyedDataMap } from '../safetensors/named-data.js';
import type { BackendInitContext } from './backend.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** The operator checks the revision name itself (ERR_CACHE_INVALID_ARGUMENT). */
type XnnpackRevisionOption = NonNullable<FullyConnectedOptions['xnnpackRevision']>;

/** The keys a linear node's tensors go by in the cache. */
export interface NodeKeys {
  kernel: string;
  bias: string | null;
}

export interface OperatorProgress {
  methodName: string;
  operators: number;
  totalOperators: number;
  weightBytes: number;
  totalWeightBytes: number;
  cacheHit: boolean;
}

/** What every operator of a method is created with. */
export interface OperatorSettings {
  readonly tiling: GemmTiling | undefined;
  /** '' = the cache's own revision. */
  readonly xnnpackRevision: string;
}

/**
 * Checks every node against the weights (before the cache is touched) and takes each
 * linear node's keys: content keys when `keyed` is given (the shared cache sees tensors by
 * content), tensor names otherwise (a private cache).
 */
export function checkAndKeyNodes(
  method: GraphMethodManifest,
  context: BackendInitContext,
  keyed: ContentKeyedDataMap | null,
): Map<number, NodeKeys> {
  const keys = new Map<number, NodeKeys>();
  const features = new Map<string, number>();
  for (const input of method.inputs) features.set(input.name, input.features);
  const graph = method.graph;
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    checkNode(node, index, features, context);
    if (node.op !== 'linear') continue;
    const bias = node.bias;
    keys.set(
      index,
      keyed
        ? { kernel: keyed.add(node.weight), bias: bias === undefined ? null : keyed.add(bias) }
        : { kernel: node.weight, bias: bias ?? null },
    );
  }
  return keys;
}

/** Creates the method's fully-connected operators through `cache`, by node index. */
export function createOperators(
  cache: XNNWeightsCache,
  method: GraphMethodManifest,
  context: BackendInitContext,
  keys: ReadonlyMap<number, NodeKeys>,
  settings: OperatorSettings,
  operators: Map<number, FullyConnectedOperator>,
  onCreated: ((progress: OperatorProgress) => void) | undefined,
): void {
  const { methodName, program } = context;
  const graph = method.graph;
  // Progress totals are only read by onCreated: without it, no extra pass.
  let totalOperators = 0;
  let totalWeightBytes = 0;
  if (onCreated !== undefined) {
    for (const node of graph) {
      if (node.op !== 'linear') continue;
      totalOperators++;
      totalWeightBytes += 4 * elementsOf(program.namedData.info(node.weight)?.shape ?? []);
    }
  }
  let weightBytes = 0;
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    if (node.op !== 'linear') continue;
    const nodeKeys = keys.get(index) as NodeKeys;
    const kernel = cache.loadUnpackedData(nodeKeys.kernel);
    const bias = nodeKeys.bias === null ? null : cache.loadUnpackedData(nodeKeys.bias);
    // Optional operator options are set only when given (no spreads: once per node).
    const options: Mutable<FullyConnectedOptions> = {
      cache,
      inputChannels: kernel.shape[1] as number,
      outputChannels: kernel.shape[0] as number,
      kernel,
      bias,
    };
    if (settings.tiling !== undefined) options.tiling = settings.tiling;
    if (node.outputMin !== undefined) options.outputMin = node.outputMin;
    if (node.outputMax !== undefined) options.outputMax = node.outputMax;
    if (settings.xnnpackRevision !== '')
      options.xnnpackRevision = settings.xnnpackRevision as XnnpackRevisionOption;
    const operator = createFullyConnectedNcF32(options);
    operators.set(index, operator);
    if (onCreated === undefined) continue;
    weightBytes += 4 * elementsOf(kernel.shape);
    onCreated({
      methodName,
      operators: operators.size,
      totalOperators,
      weightBytes,
      totalWeightBytes,
      cacheHit: operator.cacheHit,
    });
  }
}

/** Operators whose weights came from the cache instead of being packed. */
export function countCacheHits(operators: ReadonlyMap<number, FullyConnectedOperator>): number {
  let hits = 0;
  for (const operator of operators.values()) if (operator.cacheHit) hits++;
  return hits;
}

/** Checks a node's tensors against the features flowing into it and records its output. */
function checkNode(
  node: GraphNode,
  index: number,
  features: Map<string, number>,
  context: BackendInitContext,
): void {
  const inFeatures = features.get(node.input) as number;
  if (node.op !== 'linear') {
    features.set(node.output, inFeatures);
    return;
  }
  const namedData = context.program.namedData;
  const kernel = namedData.info(node.weight);
  if (!kernel || !FLOAT_DTYPES.has(kernel.dtype))
    nodeProblem(
      context,
      index,
      'weight',
      `weight "${node.weight}" is not in the program's weights`,
    );
  if (kernel.shape.length !== 2 || kernel.shape[1] !== inFeatures) {
    nodeProblem(
      context,
      index,
      'weight',
      `weight "${node.weight}" has shape [${kernel.shape.join(', ')}]; expected [out, ${inFeatures}]`,
    );
  }
  if (node.bias !== undefined) {
    const bias = namedData.info(node.bias);
    if (!bias || !FLOAT_DTYPES.has(bias.dtype))
      nodeProblem(context, index, 'bias', `bias "${node.bias}" is not in the program's weights`);
    if (bias.shape.length !== 1 || bias.shape[0] !== kernel.shape[0]) {
      nodeProblem(
        context,
        index,
        'bias',
        `bias "${node.bias}" has shape [${bias.shape.join(', ')}]; expected [${kernel.shape[0]}]`,
      );
    }
  }
  features.set(node.output, kernel.shape[0] as number);
}

/** A node whose tensors do not fit: the field path is built only here, on failure. */
function nodeProblem(
  { methodName, program }: BackendInitContext,
  index: number,
  tensor: 'weight' | 'bias',
  message: string,
): never {
  const at = `methods.${methodName}.graph[${index}].${tensor}`;
  throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `${program.path}: ${at}: ${message}`, {
    file: program.path,
    field: at,
  });
}

function elementsOf(shape: readonly number[]): number {
  let product = 1;
  for (const size of shape) product *= size;
  return product;
}
