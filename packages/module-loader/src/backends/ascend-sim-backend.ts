import { DeviceRunner, type RegisteredCallable } from '@memlayer/device-runner';
import { ModuleLoaderError } from '../errors.js';
import type { BackendOption, OptionValue } from '../options/backend-option.js';
import type { CompileSpecValue } from '../program/manifest.js';
import type { Backend, BackendInitContext, Tensor } from './backend.js';

export const ASCEND_SIM_BACKEND_ID = 'AscendSimBackend';

export interface AscendSimHandle {
  readonly cid: number;
  readonly callable: RegisteredCallable;
  /** Device bytes this registration copied (0 when the same bytes were already resident). */
  readonly bytesUploaded: number;
  destroyed: boolean;
}

/**
 * Runs callable methods on a simulated Ascend device: init registers the method's
 * ChipCallable on the runner (one refcounted device buffer per distinct content),
 * destroy unregisters it, so unloading a Module returns device memory to its baseline.
 * The simulator has no AICore to run kernels: execute binds the callable's dispatch
 * table for a run and returns no tensors.
 */
export class AscendSimBackend implements Backend<AscendSimHandle> {
  readonly id = ASCEND_SIM_BACKEND_ID;
  readonly runner: DeviceRunner;

  constructor(config: { runner?: DeviceRunner } = {}) {
    this.runner = config.runner ?? new DeviceRunner();
  }

  init(
    context: BackendInitContext,
    _compileSpecs: Readonly<Record<string, CompileSpecValue>>,
    _runtimeSpecs: readonly BackendOption[],
  ): AscendSimHandle {
    const { method, methodName, program } = context;
    if (method.kind !== 'callable') {
      throw new ModuleLoaderError(
        'ERR_MANIFEST_INVALID',
        `Method "${methodName}" has no callable for ${this.id}`,
        {
          file: program.path,
          field: `methods.${methodName}`,
        },
      );
    }
    const bytes = program.readFile(method.callable, `methods.${methodName}.callable`);
    const result = this.runner.registerCallable(method.callableId, bytes, {
      orchestration: method.orchestration,
    });
    return {
      cid: method.callableId,
      callable: result.callable,
      bytesUploaded: result.bytesUploaded,
      destroyed: false,
    };
  }

  execute(handle: AscendSimHandle, _inputs: readonly Tensor[]): Tensor[] {
    if (handle.destroyed)
      throw new ModuleLoaderError('ERR_METHOD_NOT_LOADED', 'This method was destroyed');
    this.runner.beginRun(handle.cid);
    this.runner.endRun();
    return [];
  }

  destroy(handle: AscendSimHandle): void {
    if (handle.destroyed) return;
    handle.destroyed = true;
    this.runner.unregisterCallable(handle.cid);
  }

  /** The simulator has no global options: every key is ignored, as upstream ignores unknown keys. */
  setOption(_key: string, _value: OptionValue): void {}

  getOption(_key: string): OptionValue | undefined {
    return undefined;
  }
}
