export { gelu, relu } from './backends/activations.js';
export {
  ASCEND_SIM_BACKEND_ID,
  AscendSimBackend,
  type AscendSimHandle,
} from './backends/ascend-sim-backend.js';
export type { Backend, BackendInitContext, Tensor } from './backends/backend.js';
export { createDefaultRegistry, type DefaultBackendsConfig } from './backends/default-registry.js';
export { BackendRegistry } from './backends/registry.js';
export {
  HeapWeightsCacheSource,
  type WeightsCacheLease,
  type WeightsCacheSource,
} from './backends/weights-cache-source.js';
export {
  type OperatorProgress,
  XNNPACK_BACKEND_ID,
  XnnpackBackend,
  type XnnpackBackendConfig,
  type XnnpackHandle,
} from './backends/xnnpack-backend.js';
export * from './backends/xnnpack-options.js';
export {
  describeValue,
  MODULE_LOADER_ERROR_CODES,
  ModuleLoaderError,
  type ModuleLoaderErrorCode,
  type ModuleLoaderErrorDetails,
} from './errors.js';
export { type FileContext, resolveContainedPath } from './files/contained-path.js';
export { MAX_CALLABLE_BYTES } from './files/limits.js';
export { readRegularFile } from './files/read-regular-file.js';
export { type LoadMethodOptions, Module, type ModuleConfig } from './module/module.js';
export type {
  BackendOption,
  OptionType,
  OptionValue,
  OptionValueOf,
} from './options/backend-option.js';
export { BackendOptions, type ReadonlyBackendOptions } from './options/backend-options.js';
export * from './options/limits.js';
export {
  type BackendOptionsEntry,
  LoadBackendOptionsMap,
  type ReadonlyLoadBackendOptionsMap,
} from './options/load-backend-options-map.js';
export { OwnedOptionsMap } from './options/owned-options-map.js';
export * from './program/manifest.js';
export { type LoadedProgram, loadProgram, type ProgramVerification } from './program/program.js';
export { DTYPE_BYTES, type SafetensorsDtype } from './safetensors/dtypes.js';
export { SafetensorsFile, SafetensorsNamedDataMap } from './safetensors/file.js';
export {
  parseSafetensorsHeader,
  type SafetensorsHeader,
  type SafetensorsTensorInfo,
} from './safetensors/header.js';
export * as safetensorsLimits from './safetensors/limits.js';
export { encodeSafetensors, type F32TensorInput } from './safetensors/writer.js';
