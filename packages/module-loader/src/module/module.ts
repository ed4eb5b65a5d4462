import type { Tensor } from '../backends/backend.js';
import { createDefaultRegistry } from '../backends/default-registry.js';
import type { BackendRegistry } from '../backends/registry.js';
import { describeValue, invalidArgument, ModuleLoaderError } from '../errors.js';
import type { ReadonlyLoadBackendOptionsMap } from '../options/load-backend-options-map.js';
import { OwnedOptionsMap } from '../options/owned-options-map.js';
import type { ProgramManifest } from '../program/manifest.js';
import { type LoadedProgram, loadProgram, type ProgramVerification } from '../program/program.js';
import { PteProgram } from '../pte/pte-program.js';
import { type LoadedMethod, loadPteMethod } from './pte-method.js';

/** The native kernels' limit (@memlayer/mmap-native gemmF32). */
const MAX_THREADS = 256;

export interface ModuleConfig {
  /** Backends available to this Module's methods (default: createDefaultRegistry()). */
  registry?: BackendRegistry;
  /**
   * .ptd files holding the constants of a .pte program (ExecuTorch's
   * Module(file_path, data_files)); unused by JSON programs.
   */
  dataFiles?: readonly string[];
  /**
   * Threads a method's operators may share, the calling thread included (1 to 256, default
   * 1; onnxruntime's intraOpNumThreads): the native kernels' own pool, started on first
   * use. Small layers stay on the calling thread; the JavaScript kernel ignores it.
   */
  threads?: number;
}

/** What a method takes and gives, without loading it (ExecuTorch's MethodMeta, reduced). */
export interface MethodMeta {
  readonly name: string;
  /** Each input's sizes as the program declares them (a JSON graph's: [1, features]). */
  readonly inputs: readonly (readonly number[])[];
  readonly outputs: number;
  /** The backends its delegates (or its manifest) name. */
  readonly backends: readonly string[];
}

export interface LoadMethodOptions {
  /** Options for this method only; wins over the Module's own map (no merging). */
  options?: ReadonlyLoadBackendOptionsMap;
}

/**
 * Loads a program and runs its methods, like ExecuTorch's extension/module Module.
 * It owns a deep copy of the backend options given to load() (PR #19673), and load()
 * is all-or-nothing: on any error neither the options nor the program change.
 */
export class Module {
  readonly programPath: string;
  readonly dataFiles: readonly string[];
  readonly threads: number;
  private readonly registry: BackendRegistry;
  private program: LoadedProgram | PteProgram | undefined;
  private options: OwnedOptionsMap = OwnedOptionsMap.EMPTY;
  private readonly methods = new Map<string, LoadedMethod>();
  private disposed = false;

  constructor(programPath: string, config: ModuleConfig = {}) {
    if (typeof programPath !== 'string' || programPath.length === 0) {
      invalidArgument('a non-empty path', 'the Module program path', programPath);
    }
    if (
      typeof config !== 'object' ||
      config === null ||
      // Duck-typed: a registry from another copy of this package is still a registry.
      (config.registry !== undefined &&
        typeof (config.registry as Partial<BackendRegistry>).get !== 'function')
    ) {
      invalidArgument(
        '{ registry?: BackendRegistry, dataFiles?: string[], threads?: number }',
        'the Module config',
        config,
      );
    }
    const { dataFiles = [] } = config;
    if (
      !Array.isArray(dataFiles) ||
      !dataFiles.every((file) => typeof file === 'string' && file !== '')
    ) {
      invalidArgument('an array of .ptd paths', 'dataFiles', dataFiles);
    }
    const { threads = 1 } = config;
    if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
      invalidArgument(`an integer from 1 to ${MAX_THREADS}`, 'threads', threads);
    }
    this.programPath = programPath;
    this.dataFiles = [...dataFiles];
    this.threads = threads;
    this.registry = config.registry ?? createDefaultRegistry();
  }

  /**
   * Loads the program (once) and, when `optionsMap` is given, installs a Module-owned copy
   * of it. Without a map the installed options stay (upstream's load() keeps the options
   * an earlier load(map) set, extension/module/module.cpp). Validate and copy first, load
   * second, commit both together.
   */
  load(
    optionsMap?: ReadonlyLoadBackendOptionsMap,
    verification: ProgramVerification = 'minimal',
  ): void {
    this.assertUsable();
    const options = optionsMap === undefined ? this.options : OwnedOptionsMap.copyOf(optionsMap);
    const program =
      this.program ??
      (isPteProgram(this.programPath)
        ? new PteProgram(this.programPath, this.dataFiles)
        : loadProgram(this.programPath, verification));
    this.program = program;
    this.options = options;
  }

  isLoaded(): boolean {
    return this.program !== undefined;
  }

  /** The Module's own options (an immutable copy; mutating the caller's map never reaches it). */
  backendOptions(): OwnedOptionsMap {
    return this.options;
  }

  /** A JSON program's manifest (methods, inputs, graphs); loads the program if needed. */
  programManifest(): ProgramManifest {
    const program = this.requireProgram();
    if (program instanceof PteProgram) {
      invalidArgument(
        'a JSON program',
        'programManifest() (a .pte has no manifest)',
        this.programPath,
      );
    }
    return program.manifest;
  }

  methodNames(): string[] {
    const program = this.requireProgram();
    return program instanceof PteProgram
      ? program.methodNames()
      : [...program.manifest.methods.keys()];
  }

  /** A method's inputs, output count and backends; loads the program if needed. */
  methodMeta(name: string): MethodMeta {
    const program = this.requireProgram();
    if (program instanceof PteProgram) {
      const method = this.pteMethod(program, name);
      return {
        name,
        inputs: method.inputs.map((value) => method.tensor(value)?.sizes ?? []),
        outputs: method.outputs.length,
        backends: [...new Set(method.delegates.map((delegate) => delegate.id))],
      };
    }
    const manifest = program.manifest.methods.get(name);
    if (!manifest) this.methodNotFound(name, [...program.manifest.methods.keys()]);
    return {
      name,
      inputs: manifest.kind === 'graph' ? manifest.inputs.map((input) => [1, input.features]) : [],
      outputs: manifest.kind === 'graph' ? manifest.outputs.length : 0,
      backends: [manifest.backend],
    };
  }

  isMethodLoaded(name: string): boolean {
    return this.methods.has(name);
  }

  /** The options a loaded method was initialised with. */
  methodOptions(name: string): OwnedOptionsMap {
    return this.requireMethod(name).options;
  }

  /** The backend's handle of a loaded method (e.g. XnnpackHandle), for diagnostics. */
  methodHandle(name: string): unknown {
    return this.requireMethod(name).handle;
  }

  /**
   * Initialises a method on its backend, loading the program first if needed. No-op when
   * already loaded. An explicit map wins; otherwise the Module's own map when non-empty;
   * otherwise no options.
   */
  loadMethod(name: string, { options }: LoadMethodOptions = {}): void {
    this.assertUsable();
    if (this.methods.has(name)) return;
    const program = this.requireProgram();
    const chosen =
      options !== undefined
        ? OwnedOptionsMap.copyOf(options)
        : this.options.size > 0
          ? this.options
          : OwnedOptionsMap.EMPTY;
    this.methods.set(
      name,
      program instanceof PteProgram
        ? loadPteMethod(program, this.pteMethod(program, name), this.registry, chosen, this.threads)
        : this.loadGraphMethod(program, name, chosen),
    );
  }

  private pteMethod(program: PteProgram, name: string) {
    const method = program.method(name);
    if (method === undefined) this.methodNotFound(name, program.methodNames());
    return method;
  }

  private loadGraphMethod(
    program: LoadedProgram,
    name: string,
    chosen: OwnedOptionsMap,
  ): LoadedMethod {
    const manifest = program.manifest.methods.get(name);
    if (!manifest) this.methodNotFound(name, [...program.manifest.methods.keys()]);
    const backend = this.registry.get(manifest.backend);
    let handle: unknown;
    try {
      handle = backend.init(
        { methodName: name, method: manifest, program, threads: this.threads },
        manifest.compileSpecs,
        chosen.getOptions(manifest.backend),
      );
    } catch (error) {
      if (error instanceof ModuleLoaderError) throw error;
      throw new ModuleLoaderError(
        'ERR_BACKEND_INIT_FAILED',
        `Backend ${manifest.backend} failed to initialise method "${name}": ${(error as Error).message}`,
        { field: name, cause: error },
      );
    }
    return {
      options: chosen,
      handle,
      execute: (inputs) => backend.execute(handle, inputs),
      destroy: () => backend.destroy(handle),
    };
  }

  private methodNotFound(name: string, names: readonly string[]): never {
    throw new ModuleLoaderError(
      'ERR_METHOD_NOT_FOUND',
      `Expected one of the methods of ${this.programPath} (${names.join(', ')}) but received ${describeValue(name)}`,
      { file: this.programPath, field: name },
    );
  }

  /** Runs a method, loading the program and the method first if needed (as upstream's execute). */
  execute(name: string, inputs: readonly Tensor[]): Tensor[] {
    this.loadMethod(name);
    return (this.methods.get(name) as LoadedMethod).execute(inputs);
  }

  /** Destroys a loaded method's backend state. Returns false when it was not loaded. */
  unloadMethod(name: string): boolean {
    const method = this.methods.get(name);
    if (!method) return false;
    this.methods.delete(name);
    method.destroy();
    return true;
  }

  /**
   * Releases everything: each method's backend state (cache references, device buffers),
   * then the program's mapped weights. The installed options stay, so a later load() or
   * lazy execute() runs with them again; load(emptyMap) clears them.
   */
  unload(): void {
    const errors: unknown[] = [];
    for (const name of [...this.methods.keys()]) {
      try {
        this.unloadMethod(name);
      } catch (error) {
        errors.push(error);
      }
    }
    this.program?.close();
    this.program = undefined;
    if (errors.length > 0) throw errors[0];
  }

  /** unload(), then refuse further use. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    try {
      this.unload();
    } finally {
      this.disposed = true;
      this.options = OwnedOptionsMap.EMPTY;
    }
  }

  /**
   * The program, loaded on first use with the installed options and 'minimal'
   * verification: upstream's method_names, method_meta and load_method call load() first.
   */
  private requireMethod(name: string): LoadedMethod {
    const method = this.methods.get(name);
    if (!method) {
      throw new ModuleLoaderError(
        'ERR_METHOD_NOT_LOADED',
        `Expected a loaded method but received ${describeValue(name)}; call loadMethod() first`,
        { field: name },
      );
    }
    return method;
  }

  private requireProgram(): LoadedProgram | PteProgram {
    this.assertUsable();
    if (!this.program) this.load();
    return this.program as LoadedProgram | PteProgram;
  }

  private assertUsable(): void {
    if (this.disposed) {
      throw new ModuleLoaderError(
        'ERR_MODULE_DISPOSED',
        `Module ${this.programPath} was disposed`,
        {
          file: this.programPath,
        },
      );
    }
  }
}

/** An ExecuTorch program is known by its extension, as ExecuTorch's tools name it. */
function isPteProgram(path: string): boolean {
  return path.toLowerCase().endsWith('.pte');
}
