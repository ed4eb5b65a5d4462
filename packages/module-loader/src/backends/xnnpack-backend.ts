import type {
  CacheAcquireOptions,
  FullyConnectedOperator,
  GemmTiling,
  NamedDataMap,
  XNNWeightsCache,
} from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';
import { describeValue, ModuleLoaderError } from '../errors.js';
import type { BackendOption, OptionValue } from '../options/backend-option.js';
import type { CompileSpecValue, GraphMethodManifest } from '../program/manifest.js';
import { programInvalid } from '../pte/pte-errors.js';
import { readXnnGraph, type XnnGraph } from '../pte/xnn-graph.js';
import { ContentKeyedDataMap } from '../safetensors/named-data.js';
import type { WeightStats } from '../safetensors/weight-stats.js';
import { gelu, relu } from './activations.js';
import type {
  Backend,
  BackendInitContext,
  DelegateInitContext,
  PreparedDelegate,
  Tensor,
} from './backend.js';
import { DelegateChain } from './delegate-chain.js';
import { IntermediateArena, type NodeOutputs } from './intermediate-arena.js';
import type { MethodOperators } from './method-operators.js';
import type { NodeKeyColumns } from './node-keys.js';
import type { WeightsCacheLease, WeightsCacheSource } from './weights-cache-source.js';
import { createDelegateOperators, executeDelegate } from './xnnpack-delegate.js';
import { delegateProblems, hasNamedConstants } from './xnnpack-delegate-checks.js';
import { DelegateDataMap } from './xnnpack-delegate-data.js';
import { checkAndKeyNodes, createOperators, type OperatorProgress } from './xnnpack-nodes.js';
import {
  checkXnnpackOption,
  DEFAULT_XNNPACK_OPTIONS,
  resolveXnnpackOptions,
  XNNPACK_OPTION_KEYS,
  type XnnpackRuntimeOptions,
} from './xnnpack-options.js';
import { type XnnpackWorkspace, XnnpackWorkspaces } from './xnnpack-workspace.js';

export const XNNPACK_BACKEND_ID = 'XnnpackBackend';

export interface XnnpackBackendConfig {
  /**
   * Cache instances per packed_cache_path (default: an XNNWeightsCacheManager, so a path
   * is a cache file; the empty path is one shared heap-only cache).
   */
  caches?: WeightsCacheSource;
  /** GEMM tiling of every operator (compile spec `tiling` = "nr,kr,sr" overrides it). */
  tiling?: GemmTiling;
  /**
   * Called after each fully-connected operator is created (packed or found in the cache),
   * with the weight bytes handled so far and in total: for progress displays.
   */
  onOperatorCreated?: (progress: OperatorProgress) => void;
}

export type { OperatorProgress } from './xnnpack-nodes.js';

/** The cache side of an init: the operators and the references they hold. */
interface CacheBuild {
  readonly operators: MethodOperators;
  readonly cacheHits: number;
  readonly packedDataNames: string[];
  readonly cache: XNNWeightsCache;
  readonly lease: WeightsCacheLease | null;
}

/** What initDelegate hands back: an ExecuTorch XNNPACK delegate ready to run. */
export interface XnnpackDelegateHandle extends CacheBuild {
  readonly kind: 'delegate';
  readonly graph: XnnGraph;
  readonly options: Readonly<XnnpackRuntimeOptions>;
  /** Scratch for intermediate values, shared as workspace_sharing_mode says. */
  readonly workspace: XnnpackWorkspace;
  /** This method's intermediate values in the workspace. */
  readonly intermediates: IntermediateArena;
  /** The delegate's layers as one native call, when they form a line (made at first run). */
  readonly chain: DelegateChain;
  destroyed: boolean;
}

/** What init hands back: the method's operators and the cache references it holds. */
export interface XnnpackHandle {
  readonly kind: 'graph';
  readonly method: GraphMethodManifest;
  readonly options: Readonly<XnnpackRuntimeOptions>;
  /**
   * One operator per linear node, by node index. An operator whose weights the cache held is
   * made when first read (run, get or iteration); the others were made when packed.
   */
  readonly operators: MethodOperators;
  /**
   * Names finalizeForRuntime returned: the references this method holds. With the weight
   * cache on, each is the content key of the kernel followed by that of the bias.
   */
  readonly packedDataNames: readonly string[];
  /**
   * Content key (hex SHA-256 of the stored bytes) of each linear node's kernel and bias (with
   * the weight cache off: the tensor names). Entries are made when read.
   */
  readonly contentKeys: ReadonlyMap<number, { kernel: string; bias: string | null }>;
  /** Scratch for intermediate values, shared as workspace_sharing_mode says. */
  readonly workspace: XnnpackWorkspace;
  /** This method's intermediate values in the workspace. */
  readonly intermediates: IntermediateArena;
  /** The program's weight-loading cost when this method was ready (stats, headers, hashing). */
  readonly weightStats: WeightStats;
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
export class XnnpackBackend implements Backend<XnnpackHandle | XnnpackDelegateHandle> {
  readonly id = XNNPACK_BACKEND_ID;
  private readonly caches: WeightsCacheSource;
  private readonly tiling: GemmTiling | undefined;
  private readonly onOperatorCreated: XnnpackBackendConfig['onOperatorCreated'];
  private globals: XnnpackRuntimeOptions = { ...DEFAULT_XNNPACK_OPTIONS };
  private readonly workspaces = new XnnpackWorkspaces();

  constructor(config: XnnpackBackendConfig = {}) {
    this.caches = config.caches ?? new (xnnpackCache().XNNWeightsCacheManager)();
    this.tiling = config.tiling;
    this.onOperatorCreated = config.onOperatorCreated;
  }

  /**
   * Global options. As upstream: `packed_cache_path` is kept (getOption reads it back) but
   * chooses no init's cache file; `save_weight_cache_on_disk` = true saves every live cache
   * now (a one-shot, never stored; a failure is ERR_WEIGHTS_CACHE_SAVE_FAILED).
   */
  setOption(key: string, value: OptionValue): void {
    if (!checkXnnpackOption(key, value)) return;
    if (key === XNNPACK_OPTION_KEYS.saveWeightCacheOnDisk) {
      if (value === true) this.saveAll();
      return;
    }
    this.globals = resolveXnnpackOptions([{ key, value }], this.globals);
  }

  getOption(key: string): OptionValue | undefined {
    if (key === XNNPACK_OPTION_KEYS.weightCacheEnabled) return this.globals.weightCacheEnabled;
    if (key === XNNPACK_OPTION_KEYS.workspaceSharingMode) return this.globals.workspaceSharingMode;
    if (key === XNNPACK_OPTION_KEYS.packedCachePath) return this.globals.packedCachePath;
    if (key === XNNPACK_OPTION_KEYS.xnnpackRevision) return this.globals.xnnpackRevision;
    if (key === XNNPACK_OPTION_KEYS.packedCacheMaxMib) return this.globals.packedCacheMaxMib;
    return undefined;
  }

  private saveAll(): void {
    const error = this.caches.saveAll();
    if (error) {
      throw new ModuleLoaderError(
        'ERR_WEIGHTS_CACHE_SAVE_FAILED',
        `Saving the weights cache failed: ${error.message}`,
        { cause: error },
      );
    }
  }

  /**
   * An init's options: its runtime specs over the globals, except the cache path, which
   * only the runtime specs choose. As upstream (XNNPACKBackend.cpp init: "Only honor a path
   * coming through runtime_spec"): the global would send a model loaded without a path into
   * another model's cache file, its budget and its eviction.
   */
  private initOptions(runtimeSpecs: readonly BackendOption[]): XnnpackRuntimeOptions {
    return resolveXnnpackOptions(runtimeSpecs, { ...this.globals, packedCachePath: '' });
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
    const options = this.initOptions(runtimeSpecs);
    const tiling = tilingOf(compileSpecs, this.tiling);
    const useCache = options.weightCacheEnabled;
    program.namedData.resolve();
    // One pass checks every node against the weights before the cache is touched and
    // takes each linear node's keys: the shared cache sees tensors by content, a private
    // cache (weight cache off) by name.
    const keyed = useCache ? new ContentKeyedDataMap(program.namedData) : null;
    const contentKeys = checkAndKeyNodes(method, context, keyed);
    return this.build(context, method, options, tiling, contentKeys, keyed ?? program.namedData);
  }

  /**
   * initializeForRuntime → an operator per linear node through the cache → finalize, with
   * the method's keys and the map that serves their tensors.
   */
  private build(
    context: BackendInitContext,
    method: GraphMethodManifest,
    options: XnnpackRuntimeOptions,
    tiling: GemmTiling | undefined,
    contentKeys: NodeKeyColumns,
    namedData: NamedDataMap,
  ): XnnpackHandle {
    const { program } = context;
    const built = this.withCache(options, namedData, (cache) =>
      createOperators(
        cache,
        method,
        context,
        contentKeys,
        { tiling, xnnpackRevision: options.xnnpackRevision, threads: context.threads ?? 1 },
        this.onOperatorCreated,
      ),
    );
    const { operators, packedDataNames, cache, cacheHits, lease } = built;
    const workspace = this.workspaces.acquire(options.workspaceSharingMode, program);
    return {
      kind: 'graph',
      method,
      options,
      operators: operators as MethodOperators,
      packedDataNames,
      contentKeys,
      workspace,
      intermediates: new IntermediateArena(workspace),
      weightStats: program.weightStats(),
      cache,
      cacheHits,
      lease,
      destroyed: false,
    };
  }

  /**
   * initializeForRuntime → `create` (an operator per layer through the cache) → finalize,
   * in the cache the options choose. On failure the cache is left as it was.
   */
  private withCache(
    options: XnnpackRuntimeOptions,
    namedData: NamedDataMap,
    create: (cache: XNNWeightsCache) => { operators: MethodOperators; cacheHits: number },
  ): CacheBuild {
    // Without the weight cache, the method packs into a private heap cache of its own.
    const lease: WeightsCacheLease | null = options.weightCacheEnabled
      ? this.caches.acquire(options.packedCachePath, budgetOf(options))
      : null;
    const cache = lease?.cache ?? new (xnnpackCache().XNNWeightsCache)();
    let packedDataNames: string[] = [];
    let initialized = false;
    try {
      cache.initializeForRuntime(namedData);
      initialized = true;
      const { operators, cacheHits } = create(cache);
      packedDataNames = cache.finalizeForRuntime();
      // A one-shot save for this init (never stored as a global option).
      if (options.saveWeightCacheOnDisk) this.saveAll();
      return { operators, cacheHits, packedDataNames, cache, lease };
    } catch (error) {
      // Leave the cache as it was: drop the failed build's reservations, views and the
      // entries only it packed, without taking references or committing anything. After a
      // finalize that succeeded (a failed save), drop the references it took.
      if (initialized && !cache.isFinalized()) cache.abortRuntime();
      else if (packedDataNames.length > 0) cache.deletePackedData(packedDataNames);
      lease?.release();
      throw error;
    }
  }

  /** Reads an ExecuTorch program's XNNPACK payload and lists what of it cannot run here. */
  prepareDelegate(payload: Uint8Array, context: DelegateInitContext): PreparedDelegate {
    const graph = readXnnGraph(payload, (what) =>
      programInvalid(
        context.program.path,
        `method "${context.methodName}", delegate ${context.delegateIndex}: ${what}`,
      ),
    );
    // A program whose constants are named needs named data to exist, even when a warm start
    // will read none of it: ExecuTorch dereferences a missing map there.
    if (hasNamedConstants(graph)) context.program.requireNamedData(context.methodName);
    return { problems: delegateProblems(graph), prepared: graph };
  }

  /**
   * Inits a delegate that prepareDelegate found runnable: its layers are looked up by the
   * program's keys (trusted, as ExecuTorch trusts them) and only a miss reads, hashes and
   * packs the constant's bytes.
   */
  initDelegate(
    prepared: unknown,
    context: DelegateInitContext,
    runtimeSpecs: readonly BackendOption[],
  ): XnnpackDelegateHandle {
    const graph = prepared as XnnGraph;
    const options = this.initOptions(runtimeSpecs);
    const settings = {
      tiling: this.tiling,
      xnnpackRevision: options.xnnpackRevision,
      threads: context.threads ?? 1,
    };
    const namedData = new DelegateDataMap(graph, context.program, context.methodName);
    const built = this.withCache(options, namedData, (cache) =>
      createDelegateOperators(cache, graph, settings),
    );
    const workspace = this.workspaces.acquire(options.workspaceSharingMode, context.program);
    const intermediates = new IntermediateArena(workspace);
    return {
      kind: 'delegate',
      graph,
      options,
      workspace,
      intermediates,
      chain: new DelegateChain(graph),
      ...built,
      destroyed: false,
    };
  }

  execute(handle: XnnpackHandle | XnnpackDelegateHandle, inputs: readonly Tensor[]): Tensor[] {
    if (handle.kind === 'delegate')
      return executeDelegate(
        handle.graph,
        handle.operators,
        handle.intermediates,
        inputs,
        handle.chain,
      ) as Tensor[];
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
    // Intermediate values live in the workspace; method outputs are fresh arrays.
    let key = '';
    for (const spec of method.inputs) key += `${(values.get(spec.name) as Tensor).data.length},`;
    const outputs = handle.intermediates.outputs(key, () => graphNodeOutputs(handle, values));
    method.graph.forEach((node, index) => {
      const input = values.get(node.input) as Tensor;
      const out = outputs[index] as Float32Array;
      const rows = input.shape[0];
      const shape: [number, number] = [rows, out.length / rows];
      if (node.op === 'linear') {
        (handle.operators.get(index) as FullyConnectedOperator).run(input.data, rows, out);
      } else {
        out.set(input.data.subarray(0, out.length));
        (node.op === 'relu' ? relu : gelu)(out);
      }
      values.set(node.output, { shape, data: out });
    });
    return method.outputs.map((name) => values.get(name) as Tensor);
  }

  destroy(handle: XnnpackHandle | XnnpackDelegateHandle): void {
    if (handle.destroyed) return;
    handle.destroyed = true;
    // Drop the cache references before the operators (as ExecuTorch's destroy does).
    if (handle.packedDataNames.length > 0) handle.cache.deletePackedData(handle.packedDataNames);
    if (handle.kind === 'delegate') handle.chain.clear();
    handle.operators.clear();
    handle.lease?.release();
  }
}

/** Each node's output of a graph method run on `inputs` (see IntermediateArena). */
function graphNodeOutputs(handle: XnnpackHandle, inputs: ReadonlyMap<string, Tensor>): NodeOutputs {
  const { method } = handle;
  const outputs = new Set(method.outputs);
  const rowsOf = new Map<string, number>();
  const widthOf = new Map<string, number>();
  for (const [name, tensor] of inputs) {
    rowsOf.set(name, tensor.shape[0]);
    widthOf.set(name, tensor.shape[1]);
  }
  // The node that wrote each value last (none: a method input).
  const writer = new Map<string, number>();
  const nodes = { lengths: [] as number[], external: [] as boolean[], lastUses: [] as number[] };
  method.graph.forEach((node, index) => {
    const from = writer.get(node.input);
    if (from !== undefined) nodes.lastUses[from] = index;
    const rows = rowsOf.get(node.input) as number;
    const width =
      node.op === 'linear'
        ? (handle.operators.get(index) as FullyConnectedOperator).outputChannels
        : (widthOf.get(node.input) as number);
    rowsOf.set(node.output, rows);
    widthOf.set(node.output, width);
    writer.set(node.output, index);
    nodes.lengths.push(rows * width);
    nodes.external.push(outputs.has(node.output));
    nodes.lastUses.push(index);
  });
  return nodes;
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

/** The disk budget an init asks for its cache file: none (the manager's) unless set. */
function budgetOf(options: XnnpackRuntimeOptions): CacheAcquireOptions {
  const mib = options.packedCacheMaxMib;
  return mib > 0 && options.packedCachePath !== '' ? { maxFileBytes: mib * 1024 * 1024 } : {};
}
