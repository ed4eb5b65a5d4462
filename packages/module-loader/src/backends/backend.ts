import type { BackendOption, OptionValue } from '../options/backend-option.js';
import type { CompileSpecValue, MethodManifest } from '../program/manifest.js';
import type { LoadedProgram } from '../program/program.js';

/** A dense f32 matrix [rows, columns] in row-major order. */
export interface Tensor {
  shape: [number, number];
  data: Float32Array;
}

export interface BackendInitContext {
  methodName: string;
  method: MethodManifest;
  program: LoadedProgram;
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
}
