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
import { FLOAT_DTYPES, type SafetensorsDtype } from '../safetensors/dtypes.js';
import type { ContentKeyedDataMap, SafetensorsNamedDataMap } from '../safetensors/named-data.js';
import type { BackendInitContext } from './backend.js';
import { NodeKeyColumns } from './node-keys.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** The operator checks the revision name itself (ERR_CACHE_INVALID_ARGUMENT). */
type XnnpackRevisionOption = NonNullable<FullyConnectedOptions['xnnpackRevision']>;

export type { NodeKeys } from './node-keys.js';

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
 * content), tensor names otherwise (a private cache). One name look-up per tensor serves
 * both; the checks read the weight tables' columns (no tensor info is made).
 */
export function checkAndKeyNodes(
  method: GraphMethodManifest,
  context: BackendInitContext,
  keyed: ContentKeyedDataMap | null,
): NodeKeyColumns {
  const graph = method.graph;
  const kernels = new Array<string | undefined>(graph.length);
  const biases = new Array<string | null>(graph.length);
  const features = new Map<string, number>();
  for (const input of method.inputs) features.set(input.name, input.features);
  const namedData = context.program.namedData;
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    const inFeatures = features.get(node.input) as number;
    if (node.op !== 'linear') {
      features.set(node.output, inFeatures);
      continue;
    }
    const kernelSlot = namedData.slotOf(node.weight);
    const outFeatures = checkTensor(
      namedData,
      kernelSlot,
      node.weight,
      inFeatures,
      context,
      index,
      'weight',
    );
    const bias = node.bias;
    const biasSlot = bias === undefined ? -1 : namedData.slotOf(bias);
    if (bias !== undefined) {
      checkTensor(namedData, biasSlot, bias, outFeatures, context, index, 'bias');
    }
    features.set(node.output, outFeatures);
    if (keyed === null) {
      kernels[index] = node.weight;
      biases[index] = bias ?? null;
    } else {
      kernels[index] = keyed.addSlot(kernelSlot);
      biases[index] = bias === undefined ? null : keyed.addSlot(biasSlot);
    }
  }
  return new NodeKeyColumns(kernels, biases);
}

/** Creates the method's fully-connected operators through `cache`, by node index. */
export function createOperators(
  cache: XNNWeightsCache,
  method: GraphMethodManifest,
  context: BackendInitContext,
  keys: NodeKeyColumns,
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
    const kernel = cache.loadUnpackedData(keys.kernels[index] as string);
    const biasKey = keys.biases[index] as string | null;
    const bias = biasKey === null ? null : cache.loadUnpackedData(biasKey);
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

/**
 * Checks the tensor in `slot` (-1: none) for a node: an f32/f16/bf16 tensor, a weight
 * [out, features] or a bias [features]. Returns its first size (a weight's out features).
 */
function checkTensor(
  namedData: SafetensorsNamedDataMap,
  slot: number,
  name: string,
  features: number,
  context: BackendInitContext,
  index: number,
  role: 'weight' | 'bias',
): number {
  const table = slot < 0 ? null : namedData.fileAtSlot(slot).table;
  const at = slot < 0 ? -1 : namedData.indexAtSlot(slot);
  if (table === null || !FLOAT_DTYPES.has(table.dtypes[at] as SafetensorsDtype)) {
    nodeProblem(context, index, role, `${role} "${name}" is not in the program's weights`);
  }
  const rank = table.ranks[at] as number;
  const start = table.shapeStarts[at] as number;
  const first = table.dims[start] as number;
  const fits =
    role === 'weight'
      ? rank === 2 && table.dims[start + 1] === features
      : rank === 1 && first === features;
  if (!fits) {
    const expected = role === 'weight' ? `[out, ${features}]` : `[${features}]`;
    nodeProblem(
      context,
      index,
      role,
      `${role} "${name}" has shape [${table.shapeOf(at).join(', ')}]; expected ${expected}`,
    );
  }
  return first;
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
