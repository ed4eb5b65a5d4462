import {
  alignUp,
  CALLABLE_ALIGN,
  CORE_MAX_TENSOR_ARGS,
  DEFAULT_CHIP_MAX_TENSOR_ARGS,
  MAX_CHILDREN,
  NAME_FIELD_SIZE,
  STORAGE_ALIGN,
} from './constants.js';
import { invalidArgument } from './errors.js';

/** Byte offsets of the CoreCallable header (simpler callable.h): i32[32], i32, u32, u64. */
export const CoreCallableLayout = {
  signature: 0,
  sigCount: 4 * CORE_MAX_TENSOR_ARGS,
  binarySize: 4 * CORE_MAX_TENSOR_ARGS + 4,
  resolvedAddr: 4 * CORE_MAX_TENSOR_ARGS + 8,
  headerSize: 4 * CORE_MAX_TENSOR_ARGS + 16,
  /** The kernel binary starts at the header size rounded up to CALLABLE_ALIGN. */
  binaryOffset: alignUp(4 * CORE_MAX_TENSOR_ARGS + 16, CALLABLE_ALIGN),
} as const;

/** Byte offsets of the ChipCallable header for a given CHIP_MAX_TENSOR_ARGS. */
export interface ChipCallableLayout {
  readonly maxTensorArgs: number;
  readonly signature: number;
  readonly sigCount: number;
  readonly binarySize: number;
  readonly funcName: number;
  readonly funcNameLen: number;
  readonly childFuncIds: number;
  readonly childOffsets: number;
  readonly childCount: number;
  readonly configName: number;
  readonly configNameLen: number;
  /** Start of storage; the orch .so is at storage[0]. */
  readonly headerSize: number;
}

/** Upper bound on N; keeps every offset a small safe integer. */
const MAX_CHIP_TENSOR_ARGS_PARAMETER = 4096;

const layouts = new Map<number, ChipCallableLayout>();

export function chipCallableLayout(
  maxTensorArgs: number = DEFAULT_CHIP_MAX_TENSOR_ARGS,
): ChipCallableLayout {
  const cached = layouts.get(maxTensorArgs);
  if (cached) return cached;
  if (
    !Number.isInteger(maxTensorArgs) ||
    maxTensorArgs < 1 ||
    maxTensorArgs > MAX_CHIP_TENSOR_ARGS_PARAMETER
  ) {
    invalidArgument(
      `an integer in [1, ${MAX_CHIP_TENSOR_ARGS_PARAMETER}]`,
      'maxTensorArgs',
      maxTensorArgs,
    );
  }
  const sigCount = 4 * maxTensorArgs;
  const binarySize = sigCount + 4;
  const funcName = binarySize + 4;
  const funcNameLen = funcName + NAME_FIELD_SIZE;
  const childFuncIds = funcNameLen + 4;
  const childOffsets = childFuncIds + 4 * MAX_CHILDREN;
  const childCount = childOffsets + 4 * MAX_CHILDREN;
  const configName = childCount + 4;
  const configNameLen = configName + NAME_FIELD_SIZE;
  const layout: ChipCallableLayout = Object.freeze({
    maxTensorArgs,
    signature: 0,
    sigCount,
    binarySize,
    funcName,
    funcNameLen,
    childFuncIds,
    childOffsets,
    childCount,
    configName,
    configNameLen,
    headerSize: alignUp(configNameLen + 4, STORAGE_ALIGN),
  });
  layouts.set(maxTensorArgs, layout);
  return layout;
}
