import type { BackendOption, OptionValue } from '../options/backend-option.js';
import type { CompileSpecValue, MethodManifest } from '../program/manifest.js';
import type { LoadedProgram } from '../program/program.js';
import type { PteProgram } from '../pte/pte-program.js';

/** A dense f32 matrix [rows, columns] in row-major order. */
export interface Tensor {
  shape: [number, number];
  data: Float32Array;
}

export interface BackendInitContext {
  methodName: string;
  method: MethodManifest;
  program: LoadedProgram;
  /** Threads the method's operators may share (the Module's `threads`; default 1). */
  threads?: number;
}

/** Where a delegate of an ExecuTorch program sits (for its messages and its data). */
export interface DelegateInitContext {
  methodName: string;
  /** The delegate's index in the method's plan. */
  delegateIndex: number;
  program: PteProgram;
  compileSpecs: ReadonlyMap<string, Uint8Array>;
  /** Threads the delegate's operators may share (the Module's `threads`; default 1). */
  threads?: number;
}

/** A delegate payload as a backend read it: what keeps it from running here, if anything. */
export interface PreparedDelegate {
  /** One line per node or value that cannot run here; empty when it can. */
  problems: string[];
  /** What initDelegate takes. */
  prepared: unknown;
}

/**
 * What a backend implements (ExecuTorch's BackendInterface, reduced to what programs
 * here need). `init` receives the runtime specs the Module chose for this backend id.
 */
export interface Backend<Handle = unknown> {
  readonly id: string;
  init(
    context: BackendInitContext,
    compileSpecs: Readonly<Record<string, CompileSpecValue>>,
    runtimeSpecs: readonly BackendOption[],
  ): Handle;
  execute(handle: Handle, inputs: readonly Tensor[]): Tensor[];
  destroy(handle: Handle): void;
  /** Global option; a wrong type is an error, an unknown key is ignored (as upstream). */
  setOption(key: string, value: OptionValue): void;
  getOption(key: string): OptionValue | undefined;
  /**
   * ExecuTorch programs: reads a delegate's processed payload (a typed error when it is
   * malformed). A backend without it runs no .pte delegate.
   */
  prepareDelegate?(payload: Uint8Array, context: DelegateInitContext): PreparedDelegate;
  /**
   * Inits a prepared delegate. Its handle's execute takes the DelegateCall's arguments
   * (inputs set, outputs undefined) and returns them with the outputs set.
   */
  initDelegate?(
    prepared: unknown,
    context: DelegateInitContext,
    runtimeSpecs: readonly BackendOption[],
  ): Handle;
}
