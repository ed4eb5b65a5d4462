import { buildChipCallable, type ChipCallableSpec, orchestrationObject } from '../../src/index.js';

/** A distinct, loadable callable: orch with a distinct build id and `children` kernels. */
export function makeCallable(
  tag: number,
  options: { children?: number; maxTensorArgs?: number; funcIdBase?: number } = {},
): Uint8Array {
  const children = options.children ?? 2;
  const spec: ChipCallableSpec = {
    orch: orchestrationObject(tag),
    signature: [1, 2],
    funcName: 'aicpu_orchestration_entry',
    configName: 'aicpu_orchestration_config',
    children: Array.from({ length: children }, (_, i) => ({
      funcId: (options.funcIdBase ?? 0) + i,
      core: {
        signature: [1, 1, 2],
        binary: Uint8Array.from({ length: 100 + 37 * i }, (_, j) => (tag * 7 + i * 13 + j) & 0xff),
      },
    })),
  };
  return buildChipCallable(
    spec,
    options.maxTensorArgs === undefined ? {} : { maxTensorArgs: options.maxTensorArgs },
  );
}

export function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}
