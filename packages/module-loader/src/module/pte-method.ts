// A method of an ExecuTorch program, loaded: every instruction checked before anything is
// allocated, each delegate initialised on its backend, the chain run in order.
import type { Backend, PreparedDelegate, Tensor } from '../backends/backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import { describeValue, ModuleLoaderError } from '../errors.js';
import type { OwnedOptionsMap } from '../options/owned-options-map.js';
import type { PteMethod } from '../pte/pte-file.js';
import type { PteProgram } from '../pte/pte-program.js';

interface DelegateStep {
  readonly args: readonly number[];
  readonly backend: Backend;
  readonly handle: unknown;
}

/** What a loaded method of either program kind offers the Module. */
export interface LoadedMethod {
  readonly options: OwnedOptionsMap;
  /** The backend's handle (for a .pte method, of its first delegate). */
  readonly handle: unknown;
  execute(inputs: readonly Tensor[]): Tensor[];
  destroy(): void;
}

/**
 * The reasons `method` cannot run here, one per line: kernels (this runtime has no portable
 * operators), backends that are not registered or cannot read .pte delegates, and what each
 * backend finds in its payload. Also hands back each delegate as its backend read it.
 */
export function checkPteMethod(
  program: PteProgram,
  method: PteMethod,
  registry: BackendRegistry,
): { problems: string[]; prepared: Map<number, { backend: Backend; delegate: PreparedDelegate }> } {
  const problems: string[] = [];
  const prepared = new Map<number, { backend: Backend; delegate: PreparedDelegate }>();
  method.instructions.forEach((instruction, index) => {
    if (instruction.kind === 'kernel') {
      problems.push(`${instruction.operator} (instruction ${index})`);
    } else if (instruction.kind === 'other') {
      problems.push(`${instruction.name} (instruction ${index})`);
    }
  });
  method.delegates.forEach((delegate, delegateIndex) => {
    const used = method.instructions.some(
      (i) => i.kind === 'delegate' && i.delegate === delegateIndex,
    );
    if (!used) return;
    const backend = registry.has(delegate.id) ? registry.get(delegate.id) : undefined;
    if (backend?.prepareDelegate === undefined || backend.initDelegate === undefined) {
      problems.push(
        `delegate ${delegateIndex} to ${delegate.id} (no such backend runs .pte delegates here)`,
      );
      return;
    }
    const context = {
      methodName: method.name,
      delegateIndex,
      program,
      compileSpecs: delegate.compileSpecs,
    };
    const read = backend.prepareDelegate(delegate.payload, context);
    for (const problem of read.problems)
      problems.push(`${problem} in delegate ${delegateIndex} (${delegate.id})`);
    prepared.set(delegateIndex, { backend, delegate: read });
  });
  return { problems, prepared };
}

/** Loads `method` of `program`: checks it whole first, then inits each delegate in order. */
export function loadPteMethod(
  program: PteProgram,
  method: PteMethod,
  registry: BackendRegistry,
  options: OwnedOptionsMap,
  threads = 1,
): LoadedMethod {
  const { problems, prepared } = checkPteMethod(program, method, registry);
  if (problems.length > 0) {
    throw new ModuleLoaderError(
      'ERR_PROGRAM_UNSUPPORTED',
      `${program.path}: method "${method.name}" cannot run here: ${problems.join('; ')}`,
      { file: program.path, field: method.name },
    );
  }
  const steps: DelegateStep[] = [];
  try {
    for (const instruction of method.instructions) {
      if (instruction.kind !== 'delegate') continue;
      const delegateIndex = instruction.delegate;
      const { backend, delegate } = prepared.get(delegateIndex) as {
        backend: Backend;
        delegate: PreparedDelegate;
      };
      const descriptor = method.delegates[delegateIndex] as (typeof method.delegates)[number];
      const context = {
        methodName: method.name,
        delegateIndex,
        program,
        compileSpecs: descriptor.compileSpecs,
        threads,
      };
      const handle = initDelegate(backend, delegate, context, options);
      steps.push({ args: instruction.args, backend, handle });
    }
  } catch (error) {
    for (const step of steps.reverse()) step.backend.destroy(step.handle);
    throw error;
  }
  return {
    options,
    handle: steps[0]?.handle,
    execute: (inputs) => executeSteps(method, steps, inputs),
    destroy: () => {
      for (const step of [...steps].reverse()) step.backend.destroy(step.handle);
    },
  };
}

function initDelegate(
  backend: Backend,
  delegate: PreparedDelegate,
  context: Parameters<NonNullable<Backend['initDelegate']>>[1],
  options: OwnedOptionsMap,
): unknown {
  try {
    return (backend.initDelegate as NonNullable<Backend['initDelegate']>)(
      delegate.prepared,
      context,
      options.getOptions(backend.id),
    );
  } catch (error) {
    if (error instanceof ModuleLoaderError) throw error;
    throw new ModuleLoaderError(
      'ERR_BACKEND_INIT_FAILED',
      `Backend ${backend.id} failed to initialise method "${context.methodName}": ${(error as Error).message}`,
      { field: context.methodName, cause: error },
    );
  }
}

/** Runs the chain: values by EValue index, each delegate reading and writing its args. */
function executeSteps(
  method: PteMethod,
  steps: readonly DelegateStep[],
  inputs: readonly Tensor[],
): Tensor[] {
  if (!Array.isArray(inputs) || inputs.length !== method.inputs.length) {
    throw new ModuleLoaderError(
      'ERR_INVALID_INPUT',
      `Expected ${method.inputs.length} inputs for method "${method.name}" but received ${describeValue(inputs)}`,
    );
  }
  const values = new Map<number, Tensor>();
  method.inputs.forEach((value, index) => {
    values.set(value, inputs[index] as Tensor);
  });
  for (const step of steps) {
    const args = step.args.map((value) => values.get(value));
    const filled = step.backend.execute(step.handle, args as Tensor[]);
    step.args.forEach((value, index) => {
      const tensor = filled[index];
      if (tensor !== undefined) values.set(value, tensor);
    });
  }
  return method.outputs.map((value) => {
    const tensor = values.get(value);
    if (tensor === undefined) {
      throw new ModuleLoaderError(
        'ERR_PROGRAM_INVALID',
        `Method "${method.name}" computes no value for its output ${value}`,
        { field: method.name },
      );
    }
    return tensor;
  });
}
