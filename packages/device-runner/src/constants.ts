/** Tensor arguments of one AICore kernel (simpler: CORE_MAX_TENSOR_ARGS). */
export const CORE_MAX_TENSOR_ARGS = 32;
/** Tensor arguments of a ChipCallable; 128 in older simpler releases, hence a parameter. */
export const DEFAULT_CHIP_MAX_TENSOR_ARGS = 256;
/** Child images and device buffers are aligned to this (simpler: CALLABLE_ALIGN). */
export const CALLABLE_ALIGN = 64;
/** ChipCallable storage starts at a multiple of this (alignas(16) on the storage array). */
export const STORAGE_ALIGN = 16;
/** Fixed size of the child arrays of a ChipCallable. */
export const MAX_CHILDREN = 1024;
/** Name fields are char[64]: 63 bytes plus the NUL. */
export const NAME_FIELD_SIZE = 64;
export const NAME_MAX_BYTES = NAME_FIELD_SIZE - 1;
/** Callable ids are a protocol bound shared with the AICPU (simpler: MAX_REGISTERED_CALLABLE_IDS). */
export const MAX_REGISTERED_CALLABLE_IDS = 64;
/** func_id indexes the AICore dispatch table, which has MAX_CHILDREN entries. */
export const MAX_FUNC_ID = MAX_CHILDREN;
/** Entry symbol the AICPU resolves when func_name is empty (aicpu_executor.cpp). */
export const DEFAULT_ORCH_ENTRY_SYMBOL = 'aicpu_orchestration_entry';
/** Config symbol the AICPU looks up when config_name is empty (aicpu_executor.cpp). */
export const DEFAULT_ORCH_CONFIG_SYMBOL = 'aicpu_orchestration_config';
/** host_build_graph refuses an orchestration object that does not export these (runtime_maker.cpp). */
export const HOST_ORCH_REQUIRED_SYMBOLS = [
  'framework_bind_runtime',
  'framework_prewarm_graph_recorders',
] as const;

/** Direction of one tensor argument, stored as i32. */
export const ArgDirection = { SCALAR: 0, IN: 1, OUT: 2, INOUT: 3 } as const;
export type ArgDirection = (typeof ArgDirection)[keyof typeof ArgDirection];

export { alignUp } from '@memlayer/internal';
