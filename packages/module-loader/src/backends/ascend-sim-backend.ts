import type { DeviceRunner, RegisteredCallable } from '@memlayer/device-runner';
import { deviceRunner } from '#deferred/device-runner';
import { ModuleLoaderError } from '../errors.js';
import { MAX_CALLABLE_BYTES } from '../files/limits.js';
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
    this.runner = config.runner ?? new (deviceRunner().DeviceRunner)();
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
        `Expected a callable method for ${this.id} but received graph method "${methodName}"`,
        {
          file: program.path,
          field: `methods.${methodName}`,
        },
      );
    }
    const field = `methods.${methodName}.callable`;
    // Contained, regular, at most MAX_CALLABLE_BYTES, checked before a byte is read.
    const bytes = program.readFile(method.callable, field, MAX_CALLABLE_BYTES);
    let result: ReturnType<DeviceRunner['registerCallable']>;
    try {
      result = this.runner.registerCallable(method.callableId, bytes, {
        orchestration: method.orchestration,
      });
    } catch (error) {
      if (!(error instanceof deviceRunner().DeviceRunnerError)) throw error;
      // The runner's code stays reachable as error.cause.code.
      throw new ModuleLoaderError(
        'ERR_BACKEND_INIT_FAILED',
        `${program.path}: ${field}: the device runner refused ${method.callable} (${error.code}): ${error.message}`,
        { file: program.path, field, cause: error },
      );
    }
    return {
      cid: method.callableId,
      callable: result.callable,
      bytesUploaded: result.bytesUploaded,
      destroyed: false,
    };
  }

  execute(handle: AscendSimHandle, _inputs: readonly Tensor[]): Tensor[] {
    if (handle.destroyed)
      throw new ModuleLoaderError(
        'ERR_METHOD_NOT_LOADED',
        `Expected a loaded method for ${this.id}.execute but received a destroyed handle (callable id ${handle.cid})`,
      );
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
