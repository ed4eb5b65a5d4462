import type { Backend, Tensor } from '../backends/backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import { describeValue, invalidArgument, ModuleLoaderError } from '../errors.js';
import type { ReadonlyLoadBackendOptionsMap } from '../options/load-backend-options-map.js';
import { OwnedOptionsMap } from '../options/owned-options-map.js';
import type { ProgramManifest } from '../program/manifest.js';
import { type LoadedProgram, loadProgram, type ProgramVerification } from '../program/program.js';

export interface ModuleConfig {
  /** Backends available to this Module's methods. */
  registry: BackendRegistry;
}

export interface LoadMethodOptions {
  /** Options for this method only; wins over the Module's own map (no merging). */
  options?: ReadonlyLoadBackendOptionsMap;
}

interface LoadedMethod {
  backend: Backend;
  handle: unknown;
  options: OwnedOptionsMap;
}

/**
 * Loads a program and runs its methods, like ExecuTorch's extension/module Module.
 * It owns a deep copy of the backend options given to load() (PR #19673), and load()
 * is all-or-nothing: on any error neither the options nor the program change.
 */
export class Module {
  readonly programPath: string;
  private readonly registry: BackendRegistry;
  private program: LoadedProgram | undefined;
  private options: OwnedOptionsMap = OwnedOptionsMap.EMPTY;
  private readonly methods = new Map<string, LoadedMethod>();
  private disposed = false;

  constructor(programPath: string, config: ModuleConfig) {
    if (typeof programPath !== 'string' || programPath.length === 0) {
      invalidArgument('a non-empty path', 'the Module program path', programPath);
    }
    if (
      typeof config !== 'object' ||
      config === null ||
      // Duck-typed: a registry from another copy of this package is still a registry.
      typeof (config.registry as Partial<BackendRegistry> | undefined)?.get !== 'function'
    ) {
      invalidArgument('{ registry: BackendRegistry }', 'the Module config', config);
    }
    this.programPath = programPath;
    this.registry = config.registry;
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
    const program = this.program ?? loadProgram(this.programPath, verification);
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

  /** The program's manifest (methods, inputs, graphs); loads the program if needed. */
  programManifest(): ProgramManifest {
    return this.requireProgram().manifest;
  }

  methodNames(): string[] {
    return [...this.requireProgram().manifest.methods.keys()];
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
    const manifest = program.manifest.methods.get(name);
    if (!manifest) {
      throw new ModuleLoaderError(
        'ERR_METHOD_NOT_FOUND',
        `Expected one of the methods of ${this.programPath} (${[...program.manifest.methods.keys()].join(', ')}) but received ${describeValue(name)}`,
        { file: this.programPath, field: name },
      );
    }
    const chosen =
      options !== undefined
        ? OwnedOptionsMap.copyOf(options)
        : this.options.size > 0
          ? this.options
          : OwnedOptionsMap.EMPTY;
    const backend = this.registry.get(manifest.backend);
    let handle: unknown;
    try {
      handle = backend.init(
        { methodName: name, method: manifest, program },
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
    this.methods.set(name, { backend, handle, options: chosen });
  }

  /** Runs a method, loading the program and the method first if needed (as upstream's execute). */
  execute(name: string, inputs: readonly Tensor[]): Tensor[] {
    this.loadMethod(name);
    const method = this.methods.get(name) as LoadedMethod;
    return method.backend.execute(method.handle, inputs);
  }

  /** Destroys a loaded method's backend state. Returns false when it was not loaded. */
  unloadMethod(name: string): boolean {
    const method = this.methods.get(name);
    if (!method) return false;
    this.methods.delete(name);
    method.backend.destroy(method.handle);
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

  private requireProgram(): LoadedProgram {
    this.assertUsable();
    if (!this.program) this.load();
    return this.program as LoadedProgram;
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
