import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  type GemmTiling,
  XNNWeightsCache,
} from '@memlayer/xnnpack-cache';
import { describeValue, ModuleLoaderError } from '../errors.js';
import type { BackendOption, OptionValue } from '../options/backend-option.js';
import type { CompileSpecValue, GraphMethodManifest, GraphNode } from '../program/manifest.js';
import { gelu, relu } from './activations.js';
import type { Backend, BackendInitContext, Tensor } from './backend.js';
import {
  HeapWeightsCacheSource,
  type WeightsCacheLease,
  type WeightsCacheSource,
} from './weights-cache-source.js';
import {
  checkXnnpackOption,
  DEFAULT_XNNPACK_OPTIONS,
  resolveXnnpackOptions,
  XNNPACK_OPTION_KEYS,
  type XnnpackRuntimeOptions,
} from './xnnpack-options.js';

export const XNNPACK_BACKEND_ID = 'XnnpackBackend';

export interface XnnpackBackendConfig {
  /** Cache instances per packed_cache_path; heap-only when omitted. */
  caches?: WeightsCacheSource;
  /** GEMM tiling of every operator (compile spec `tiling` = "nr,kr,sr" overrides it). */
  tiling?: GemmTiling;
  /**
   * Called after each fully-connected operator is created (packed or found in the cache),
   * with the weight bytes handled so far and in total: for progress displays.
   */
  onOperatorCreated?: (progress: OperatorProgress) => void;
}

export interface OperatorProgress {
  methodName: string;
  operators: number;
  totalOperators: number;
  weightBytes: number;
  totalWeightBytes: number;
  cacheHit: boolean;
}

/** What init hands back: the method's operators and the cache references it holds. */
export interface XnnpackHandle {
  readonly method: GraphMethodManifest;
  readonly options: Readonly<XnnpackRuntimeOptions>;
  /** One operator per linear node, by node index. */
  readonly operators: Map<number, FullyConnectedOperator>;
  /** Names finalizeForRuntime returned: the references this method holds. */
  readonly packedDataNames: readonly string[];
  readonly cache: XNNWeightsCache;
  /** Operators whose weights came from the cache instead of being packed. */
  readonly cacheHits: number;
  readonly lease: WeightsCacheLease | null;
  destroyed: boolean;
}

/**
 * Runs graph methods (linear, relu, gelu) with fully-connected operators created
 * through the packed-weights cache: init → initializeForRuntime → operators through
 * the provider → finalize; destroy → deletePackedData before dropping the operators.
 */
export class XnnpackBackend implements Backend<XnnpackHandle> {
  readonly id = XNNPACK_BACKEND_ID;
  private readonly caches: WeightsCacheSource;
  private readonly tiling: GemmTiling | undefined;
  private readonly onOperatorCreated: XnnpackBackendConfig['onOperatorCreated'];
  private globals: XnnpackRuntimeOptions = { ...DEFAULT_XNNPACK_OPTIONS };

  constructor(config: XnnpackBackendConfig = {}) {
    this.caches = config.caches ?? new HeapWeightsCacheSource();
    this.tiling = config.tiling;
    this.onOperatorCreated = config.onOperatorCreated;
  }

  setOption(key: string, value: OptionValue): void {
    if (key === XNNPACK_OPTION_KEYS.packedCachePath) {
      throw new ModuleLoaderError(
        'ERR_OPTION_INVALID_KEY',
        `"${key}" is a load-time option: pass it in the LoadBackendOptionsMap given to Module.load`,
        { field: key },
      );
    }
    if (!checkXnnpackOption(key, value)) return;
    this.globals = resolveXnnpackOptions([{ key, value }], this.globals);
  }

  getOption(key: string): OptionValue | undefined {
    if (key === XNNPACK_OPTION_KEYS.weightCacheEnabled) return this.globals.weightCacheEnabled;
    if (key === XNNPACK_OPTION_KEYS.workspaceSharingMode) return this.globals.workspaceSharingMode;
    if (key === XNNPACK_OPTION_KEYS.saveWeightCacheOnDisk)
      return this.globals.saveWeightCacheOnDisk;
    return undefined;
  }

  init(
    context: BackendInitContext,
    compileSpecs: Readonly<Record<string, CompileSpecValue>>,
    runtimeSpecs: readonly BackendOption[],
  ): XnnpackHandle {
    const { method, methodName, program } = context;
    if (method.kind !== 'graph') {
      throw new ModuleLoaderError(
        'ERR_MANIFEST_INVALID',
        `Method "${methodName}" has no graph for ${this.id}`,
        {
          file: program.path,
          field: `methods.${methodName}`,
        },
      );
    }
    const options = resolveXnnpackOptions(runtimeSpecs, this.globals);
    const tiling = tilingOf(compileSpecs, this.tiling);
    // Check every node against the weights before the cache is touched.
    let features = new Map(method.inputs.map((input) => [input.name, input.features]));
    method.graph.forEach((node, index) => {
      features = this.planNode(node, index, features, context);
    });
    // Without the weight cache, the method packs into a private heap cache of its own.
    const lease: WeightsCacheLease | null = options.weightCacheEnabled
      ? this.caches.acquire(options.packedCachePath)
      : null;
    const cache = lease?.cache ?? new XNNWeightsCache();
    const operators = new Map<number, FullyConnectedOperator>();
    let packedDataNames: string[] = [];
    let initialized = false;
    try {
      cache.initializeForRuntime(program.namedData);
      initialized = true;
      const linear = method.graph.filter((node) => node.op === 'linear');
      const totalWeightBytes = linear.reduce(
        (sum, node) => sum + (program.namedData.get(node.weight)?.data.byteLength ?? 0),
        0,
      );
      let weightBytes = 0;
      method.graph.forEach((node, index) => {
        if (node.op !== 'linear') return;
        const kernel = cache.loadUnpackedData(node.weight);
        const bias = node.bias === undefined ? null : cache.loadUnpackedData(node.bias);
        const operator = createFullyConnectedNcF32({
          cache,
          inputChannels: kernel.shape[1] as number,
          outputChannels: kernel.shape[0] as number,
          kernel,
          bias,
          ...(tiling === undefined ? {} : { tiling }),
        });
        operators.set(index, operator);
        weightBytes += kernel.data.byteLength;
        this.onOperatorCreated?.({
          methodName,
          operators: operators.size,
          totalOperators: linear.length,
          weightBytes,
          totalWeightBytes,
          cacheHit: operator.cacheHit,
        });
      });
      packedDataNames = cache.finalizeForRuntime();
      if (options.saveWeightCacheOnDisk) {
        const error = this.caches.saveAll();
        if (error) throw error;
      }
    } catch (error) {
      // Leave the cache as it was: finalize what this build touched, then drop it again.
      if (initialized && !cache.isFinalized()) packedDataNames = cache.finalizeForRuntime();
      if (cache.isFinalized() && packedDataNames.length > 0)
        cache.deletePackedData(packedDataNames);
      lease?.release();
      throw error;
    }
    let cacheHits = 0;
    for (const operator of operators.values()) if (operator.cacheHit) cacheHits++;
    return {
      method,
      options,
      operators,
      packedDataNames,
      cache,
      cacheHits,
      lease,
      destroyed: false,
    };
  }

  execute(handle: XnnpackHandle, inputs: readonly Tensor[]): Tensor[] {
    const { method } = handle;
    if (handle.destroyed)
      throw new ModuleLoaderError('ERR_METHOD_NOT_LOADED', 'This method was destroyed');
    if (inputs.length !== method.inputs.length) {
      throw new ModuleLoaderError(
        'ERR_INVALID_INPUT',
        `Expected ${method.inputs.length} inputs but received ${inputs.length}`,
      );
    }
    const values = new Map<string, Tensor>();
    method.inputs.forEach((spec, index) => {
      const tensor = inputs[index] as Tensor;
      const [rows, columns] = Array.isArray(tensor?.shape) ? tensor.shape : [0, 0];
      if (
        !(tensor?.data instanceof Float32Array) ||
        columns !== spec.features ||
        !Number.isInteger(rows) ||
        rows < 1 ||
        tensor.data.length !== rows * columns
      ) {
        throw new ModuleLoaderError(
          'ERR_INVALID_INPUT',
          `Expected an f32 tensor [batch, ${spec.features}] for input "${spec.name}" but received ${describeValue(tensor)}`,
          { field: spec.name },
        );
      }
      values.set(spec.name, tensor);
    });
    method.graph.forEach((node, index) => {
      const input = values.get(node.input) as Tensor;
      const rows = input.shape[0];
      if (node.op === 'linear') {
        const operator = handle.operators.get(index) as FullyConnectedOperator;
        values.set(node.output, {
          shape: [rows, operator.outputChannels],
          data: operator.run(input.data, rows),
        });
        return;
      }
      const data = (node.op === 'relu' ? relu : gelu)(input.data.slice());
      values.set(node.output, { shape: [rows, input.shape[1]], data });
    });
    return method.outputs.map((name) => values.get(name) as Tensor);
  }

  destroy(handle: XnnpackHandle): void {
    if (handle.destroyed) return;
    handle.destroyed = true;
    // Drop the cache references before the operators (as ExecuTorch's destroy does).
    if (handle.packedDataNames.length > 0) handle.cache.deletePackedData(handle.packedDataNames);
    handle.operators.clear();
    handle.lease?.release();
  }

  /** Checks a node's tensors against the features flowing into it; returns the new map. */
  private planNode(
    node: GraphNode,
    index: number,
    features: Map<string, number>,
    { methodName, program }: BackendInitContext,
  ): Map<string, number> {
    const field = `methods.${methodName}.graph[${index}]`;
    const inFeatures = features.get(node.input) as number;
    if (node.op !== 'linear') return features.set(node.output, inFeatures);
    const kernel = program.namedData.get(node.weight);
    const fail = (message: string, at: string): never => {
      throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `${program.path}: ${at}: ${message}`, {
        file: program.path,
        field: at,
      });
    };
    if (!kernel)
      return fail(`weight "${node.weight}" is not in the program's weights`, `${field}.weight`);
    if (kernel.shape.length !== 2 || kernel.shape[1] !== inFeatures) {
      fail(
        `weight "${node.weight}" has shape [${kernel.shape.join(', ')}]; expected [out, ${inFeatures}]`,
        `${field}.weight`,
      );
    }
    if (node.bias !== undefined) {
      const bias = program.namedData.get(node.bias);
      if (!bias)
        return fail(`bias "${node.bias}" is not in the program's weights`, `${field}.bias`);
      if (bias.shape.length !== 1 || bias.shape[0] !== kernel.shape[0]) {
        fail(
          `bias "${node.bias}" has shape [${bias.shape.join(', ')}]; expected [${kernel.shape[0]}]`,
          `${field}.bias`,
        );
      }
    }
    return features.set(node.output, kernel.shape[0] as number);
  }
}

/** Compile spec `tiling` = "nr,kr,sr" (e.g. "8,1,1") picks the GEMM tiling of a method. */
function tilingOf(
  compileSpecs: Readonly<Record<string, CompileSpecValue>>,
  fallback: GemmTiling | undefined,
) {
  const spec = compileSpecs['tiling'];
  if (spec === undefined) return fallback;
  const parts = typeof spec === 'string' ? spec.split(',').map(Number) : [];
  const [nr, kr, sr] = parts;
  if (parts.length !== 3 || !parts.every((part) => Number.isInteger(part) && part > 0)) {
    throw new ModuleLoaderError(
      'ERR_MANIFEST_INVALID',
      `Expected "nr,kr,sr" for compile spec tiling but received ${describeValue(spec)}`,
      { field: 'compileSpecs.tiling' },
    );
  }
  return { nr: nr as number, kr: kr as number, sr: sr as number };
}
