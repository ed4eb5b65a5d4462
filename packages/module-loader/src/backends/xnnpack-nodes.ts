// The per-node passes of an XNNPACK init. Each loop lives in a function of its own: V8
// optimizes a hot loop by compiling its whole function on the stack, so a loop inside the
// long init would recompile init once per loop (and deoptimize it after each).
import type {
  FullyConnectedByNameOptions,
  GemmTiling,
  XNNWeightsCache,
} from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { GraphMethodManifest, GraphNode, MethodInput } from '../program/manifest.js';
import { FLOAT_DTYPES } from '../safetensors/dtypes.js';
import type { SafetensorsFile } from '../safetensors/file.js';
import type { ContentKeyedDataMap } from '../safetensors/named-data.js';
import type { BackendInitContext } from './backend.js';
import { type LayerSettings, MethodOperators } from './method-operators.js';
import { NodeKeyColumns } from './node-keys.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** createOperators' options object, reused node after node (bounds set or undefined). */
export type ReusedOptions = Omit<
  Mutable<FullyConnectedByNameOptions>,
  'outputMin' | 'outputMax'
> & {
  outputMin: number | undefined;
  outputMax: number | undefined;
};
/** The operator checks the revision name itself (ERR_CACHE_INVALID_ARGUMENT). */
type XnnpackRevisionOption = NonNullable<FullyConnectedByNameOptions['xnnpackRevision']>;

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
  /** Threads each operator's runs may share (1: the calling thread only). */
  readonly threads: number;
}

/**
 * Checks every node against the weights (before the cache is touched) and takes each
 * linear node's keys: content keys when `keyed` is given (the shared cache sees tensors by
 * content), tensor names otherwise (a private cache). One name look-up per tensor serves
 * both.
 */
export function checkAndKeyNodes(
  method: GraphMethodManifest,
  context: BackendInitContext,
  keyed: ContentKeyedDataMap | null,
): NodeKeyColumns {
  const graph = method.graph;
  const kernels = new Array<string | undefined>(graph.length);
  const biases = new Array<string | null>(graph.length);
  // Features of each node's output. A node that reads the value defined just before it (a
  // chain) needs no look-up; a map of every value is made at the first one that does not.
  const widths = new Int32Array(graph.length);
  // Input features of each linear node (0 for other nodes).
  const inputs = new Int32Array(graph.length);
  let features: Map<string, number> | null = null;
  const lastInput = method.inputs[method.inputs.length - 1] as MethodInput;
  const namedData = context.program.namedData;
  // Tensor `slot` is tensor `slot - firstSlot[f]` of files[f], f = fileOfSlot[slot].
  const files = namedData.files;
  const { fileOfSlot, firstSlot } = namedData.slotColumns();
  let linearNodes = 0;
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    let inFeatures: number;
    if (node.input === (index === 0 ? lastInput.name : (graph[index - 1] as GraphNode).output)) {
      inFeatures = index === 0 ? lastInput.features : (widths[index - 1] as number);
    } else {
      features ??= featuresBefore(method, widths, index);
      inFeatures = features.get(node.input) as number;
    }
    if (node.op !== 'linear') {
      widths[index] = inFeatures;
      features?.set(node.output, inFeatures);
      continue;
    }
    const kernelSlot = namedData.slotOf(node.weight);
    const kernelFile = kernelSlot < 0 ? -1 : (fileOfSlot[kernelSlot] as number);
    const kernelAt = kernelSlot - (kernelFile < 0 ? 0 : (firstSlot[kernelFile] as number));
    const outFeatures = checkTensor(
      kernelFile < 0 ? undefined : files[kernelFile],
      kernelAt,
      node.weight,
      inFeatures,
      context,
      index,
      'weight',
    );
    const bias = node.bias;
    let biasFile = -1;
    let biasAt = -1;
    if (bias !== undefined) {
      const biasSlot = namedData.slotOf(bias);
      biasFile = biasSlot < 0 ? -1 : (fileOfSlot[biasSlot] as number);
      biasAt = biasSlot - (biasFile < 0 ? 0 : (firstSlot[biasFile] as number));
      checkTensor(
        biasFile < 0 ? undefined : files[biasFile],
        biasAt,
        bias,
        outFeatures,
        context,
        index,
        'bias',
      );
    }
    widths[index] = outFeatures;
    inputs[index] = inFeatures;
    features?.set(node.output, outFeatures);
    linearNodes++;
    if (keyed === null) {
      kernels[index] = node.weight;
      biases[index] = bias ?? null;
    } else {
      kernels[index] = keyed.addAt(files[kernelFile] as SafetensorsFile, kernelAt);
      biases[index] =
        bias === undefined ? null : keyed.addAt(files[biasFile] as SafetensorsFile, biasAt);
    }
  }
  return new NodeKeyColumns(kernels, biases, linearNodes, widths, inputs);
}

/** Features of the method's inputs and of the outputs of the nodes before `end`, by name. */
function featuresBefore(
  method: GraphMethodManifest,
  widths: Int32Array,
  end: number,
): Map<string, number> {
  const features = new Map<string, number>();
  for (const input of method.inputs) features.set(input.name, input.features);
  for (let index = 0; index < end; index++) {
    features.set((method.graph[index] as GraphNode).output, widths[index] as number);
  }
  return features;
}

/**
 * Finds or packs every linear node's weights through `cache` and returns the method's
 * operators by node index: a layer found in the cache gets its operator when first asked
 * for (MethodOperators), a layer packed now gets it at once. `cacheHits` counts the layers
 * whose weights the cache held.
 */
export function createOperators(
  cache: XNNWeightsCache,
  method: GraphMethodManifest,
  context: BackendInitContext,
  keys: NodeKeyColumns,
  settings: OperatorSettings,
  onCreated: ((progress: OperatorProgress) => void) | undefined,
): { operators: MethodOperators; cacheHits: number } {
  const { methodName } = context;
  const graph = method.graph;
  // Progress totals are only read by onCreated: without it, no extra pass.
  let totalOperators = 0;
  let totalWeightBytes = 0;
  if (onCreated !== undefined) {
    totalOperators = keys.size;
    for (let index = 0; index < graph.length; index++) {
      totalWeightBytes +=
        4 * (keys.outFeatures[index] as number) * (keys.inFeatures[index] as number);
    }
  }
  let weightBytes = 0;
  let cacheHits = 0;
  let done = 0;
  // One options object serves every node (no operator keeps it): the fields of a node are
  // set over the last node's; the method's settings are set once. Operators made later,
  // when first asked for, get an object of their own the same way.
  const options = methodOptions(cache, settings);
  const settingsOf = (index: number): LayerSettings =>
    layerSettings(
      methodOptions(cache, settings),
      graph[index] as GraphNode,
      keys,
      index,
    ) as LayerSettings;
  const operators = new MethodOperators(graph.length, settingsOf);
  const { createMissedFullyConnectedNcF32ByName, findFullyConnectedNcF32ByName, NOT_FOUND } =
    xnnpackCache();
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    if (node.op !== 'linear') continue;
    layerSettings(options, node, keys, index);
    // By key: a cache hit loads no unpacked view (a miss loads both and checks their shapes).
    const offset = findFullyConnectedNcF32ByName(tensorNames(options, keys, index));
    let cacheHit = offset !== NOT_FOUND;
    if (cacheHit) operators.found(index, offset);
    else {
      const operator = createMissedFullyConnectedNcF32ByName(tensorNames(options, keys, index));
      operators.made(index, operator);
      cacheHit = operator.cacheHit;
    }
    if (cacheHit) cacheHits++;
    done++;
    if (onCreated === undefined) continue;
    weightBytes += 4 * options.outputChannels * options.inputChannels;
    onCreated({
      methodName,
      operators: done,
      totalOperators,
      weightBytes,
      totalWeightBytes,
      cacheHit,
    });
  }
  return { operators, cacheHits };
}

/** An options object with a method's settings, its layer fields to be set per node. */
export function methodOptions(cache: XNNWeightsCache, settings: OperatorSettings): ReusedOptions {
  const options: ReusedOptions = {
    cache,
    inputChannels: 0,
    outputChannels: 0,
    kernel: '',
    bias: null,
    outputMin: undefined,
    outputMax: undefined,
  };
  if (settings.tiling !== undefined) options.tiling = settings.tiling;
  if (settings.threads !== 1) options.threads = settings.threads;
  if (settings.xnnpackRevision !== '')
    options.xnnpackRevision = settings.xnnpackRevision as XnnpackRevisionOption;
  return options;
}

/** Sets linear node `index`'s shape and clamps on `options` and returns it. */
function layerSettings(
  options: ReusedOptions,
  node: GraphNode,
  keys: NodeKeyColumns,
  index: number,
): ReusedOptions {
  options.inputChannels = keys.inFeatures[index] as number;
  options.outputChannels = keys.outFeatures[index] as number;
  // An unset clamp bound is undefined here: the operator reads it as absent.
  options.outputMin = node.op === 'linear' ? node.outputMin : undefined;
  options.outputMax = node.op === 'linear' ? node.outputMax : undefined;
  return options;
}

/** Sets linear node `index`'s tensor keys on `options` (set up by layerSettings). */
function tensorNames(
  options: ReusedOptions,
  keys: NodeKeyColumns,
  index: number,
): FullyConnectedByNameOptions {
  options.kernel = keys.kernels[index] as string;
  options.bias = keys.biases[index] as string | null;
  return options as FullyConnectedByNameOptions;
}

/**
 * Checks tensor `at` of `file` (undefined: no file holds it) for a node: an f32/f16/bf16
 * tensor, a weight [out, features] or a bias [features]. Returns its first size (a weight's
 * out features). Small enough to be inlined into the node loop: the message of a refusal is
 * written by tensorProblem.
 */
function checkTensor(
  file: SafetensorsFile | undefined,
  at: number,
  name: string,
  features: number,
  context: BackendInitContext,
  index: number,
  role: 'weight' | 'bias',
): number {
  const info = file?.table.info(at);
  if (info === undefined || !FLOAT_DTYPES.has(info.dtype)) {
    return tensorProblem(undefined, name, features, context, index, role);
  }
  const { shape } = info;
  const first = shape[0] as number;
  const fits =
    role === 'weight'
      ? shape.length === 2 && shape[1] === features
      : shape.length === 1 && first === features;
  if (!fits) return tensorProblem(shape, name, features, context, index, role);
  return first;
}

/** The refusal of a tensor checkTensor found missing (`shape` undefined) or ill-shaped. */
function tensorProblem(
  shape: readonly number[] | undefined,
  name: string,
  features: number,
  context: BackendInitContext,
  index: number,
  role: 'weight' | 'bias',
): never {
  if (shape === undefined) {
    return nodeProblem(context, index, role, `${role} "${name}" is not in the program's weights`);
  }
  const expected = role === 'weight' ? `[out, ${features}]` : `[${features}]`;
  return nodeProblem(
    context,
    index,
    role,
    `${role} "${name}" has shape [${shape.join(', ')}]; expected ${expected}`,
  );
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
