export { AicpuModel, type AicpuSlot } from './aicpu.js';
export { elfBuildId64, readGnuBuildId } from './build-id.js';
export {
  type ChipBuffer,
  ChipBufferPool,
  type ChipBufferPoolOptions,
  type Lease,
} from './chip-buffer-pool.js';
export {
  buildChipCallable,
  type ChipCallableSpec,
  type ChipCallableView,
  type ChipChildSpec,
  type ChipChildView,
  type LayoutOptions,
  parseChipCallable,
} from './chip-callable.js';
export {
  ArgDirection,
  alignUp,
  CALLABLE_ALIGN,
  CORE_MAX_TENSOR_ARGS,
  DEFAULT_CHIP_MAX_TENSOR_ARGS,
  DEFAULT_ORCH_CONFIG_SYMBOL,
  DEFAULT_ORCH_ENTRY_SYMBOL,
  HOST_ORCH_REQUIRED_SYMBOLS,
  MAX_CHILDREN,
  MAX_FUNC_ID,
  MAX_REGISTERED_CALLABLE_IDS,
  NAME_FIELD_SIZE,
  NAME_MAX_BYTES,
  STORAGE_ALIGN,
} from './constants.js';
export {
  buildCoreCallable,
  type CoreCallableSpec,
  type CoreCallableView,
  coreCallableImageSize,
  readCoreCallable,
} from './core-callable.js';
export {
  type Allocation,
  DEFAULT_DEVICE_BASE_ADDRESS,
  DeviceAllocator,
  type DeviceAllocatorOptions,
  type FitStrategy,
} from './device-allocator.js';
export {
  type DynamicSymbol,
  MAX_DYNAMIC_ENTRIES,
  MAX_DYNAMIC_SYMBOLS,
  MAX_SYMBOL_NAME_BYTES,
  parseSharedObject,
  type SharedObjectInfo,
  STB_GLOBAL,
  STB_LOCAL,
  STB_WEAK,
  STT_FUNC,
  STT_GNU_IFUNC,
  STT_OBJECT,
  SYMBOL_NAME_BYTES_PER_INPUT_BYTE,
} from './elf.js';
export {
  type ElfSpec,
  orchestrationObject,
  type SymbolSpec,
  writeSharedObject,
} from './elf-writer.js';
export {
  DEVICE_RUNNER_ERROR_CODES,
  DeviceRunnerError,
  type DeviceRunnerErrorCode,
} from './errors.js';
export { FNV1A64_OFFSET_BASIS, FNV1A64_PRIME, Fnv1a64, fnv1a64, formatHash64 } from './fnv.js';
export { aicoreImageHash, contentHash } from './hashes.js';
export { type ChipCallableLayout, CoreCallableLayout, chipCallableLayout } from './layout.js';
export {
  type LoadedOrchestration,
  type LoadOrchestrationOptions,
  loadOrchestration,
} from './orchestration.js';
export { childDeviceAddress, patchedScratch } from './patch.js';
export { DeviceRunner } from './runner.js';
export type {
  CallableStats,
  ChipBufferStats,
  DeviceRunnerOptions,
  DeviceRunnerStats,
  Orchestration,
  RegisteredCallable,
  RegisterOptions,
  RegisterResult,
} from './runner-types.js';
export {
  DEFAULT_DEVICE_CAPACITY,
  type InjectableOperation,
  SimDevice,
  type SimDeviceOptions,
  type SimDeviceStats,
} from './sim-device.js';
