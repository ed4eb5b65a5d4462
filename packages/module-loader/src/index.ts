// The public API: explicit re-exports only, so nothing internal leaks by accident.
import * as safetensorsLimits from './safetensors/limits.js';

export { gelu, relu } from './backends/activations.js';
export {
  ASCEND_SIM_BACKEND_ID,
  AscendSimBackend,
  type AscendSimHandle,
} from './backends/ascend-sim-backend.js';
export type {
  Backend,
  BackendInitContext,
  DelegateInitContext,
  PreparedDelegate,
  Tensor,
} from './backends/backend.js';
export { createDefaultRegistry, type DefaultBackendsConfig } from './backends/default-registry.js';
export type { MethodOperators } from './backends/method-operators.js';
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
  type XnnpackDelegateHandle,
  type XnnpackHandle,
} from './backends/xnnpack-backend.js';
export {
  DEFAULT_XNNPACK_OPTIONS,
  WORKSPACE_SHARING_MODES,
  XNNPACK_OPTION_KEYS,
  XNNPACK_REVISION_VALUES,
  type XnnpackRuntimeOptions,
} from './backends/xnnpack-options.js';
export { XnnpackWorkspace, XnnpackWorkspaces } from './backends/xnnpack-workspace.js';
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
export {
  type LoadMethodOptions,
  type MethodMeta,
  Module,
  type ModuleConfig,
} from './module/module.js';
export type {
  BackendOption,
  OptionType,
  OptionValue,
  OptionValueOf,
} from './options/backend-option.js';
export { BackendOptions, type ReadonlyBackendOptions } from './options/backend-options.js';
export {
  DEFAULT_OPTIONS_CAPACITY,
  INT_OPTION_MAX,
  INT_OPTION_MIN,
  MAX_BACKEND_ID_BYTES,
  MAX_BACKENDS,
  MAX_OPTION_KEY_BYTES,
  MAX_OPTION_STRING_BYTES,
} from './options/limits.js';
export {
  type BackendOptionsEntry,
  LoadBackendOptionsMap,
  type ReadonlyLoadBackendOptionsMap,
} from './options/load-backend-options-map.js';
export { OwnedOptionsMap } from './options/owned-options-map.js';
export { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from './program/json-shape.js';
export {
  type CallableMethodManifest,
  type CompileSpecValue,
  type GraphMethodManifest,
  type GraphNode,
  MAX_GRAPH_NODES,
  MAX_MANIFEST_BYTES,
  MAX_METHODS,
  MAX_NAME_LENGTH,
  type MethodInput,
  type MethodManifest,
  PROGRAM_FORMAT,
  PROGRAM_VERSION,
  type ProgramManifest,
  parseManifest,
} from './program/manifest.js';
export { type LoadedProgram, loadProgram, type ProgramVerification } from './program/program.js';
export {
  type ConstantCheck,
  describePteProgram,
  type PteConstantSummary,
  type PteDelegateSummary,
  type PteMethodSummary,
  verifyPteConstants,
} from './pte/describe.js';
export { PteProgram } from './pte/pte-program.js';
export {
  type ExportedProgram,
  type ExportProgramOptions,
  exportProgram,
} from './pte/write/export-program.js';
export { DTYPE_BYTES, type SafetensorsDtype } from './safetensors/dtypes.js';
export { SafetensorsFile } from './safetensors/file.js';
export {
  parseSafetensorsHeader,
  type SafetensorsHeader,
  type SafetensorsTensorInfo,
} from './safetensors/header.js';
export { ContentKeyedDataMap, SafetensorsNamedDataMap } from './safetensors/named-data.js';
export { TensorTable } from './safetensors/tensor-table.js';
export { MappedTensorView } from './safetensors/tensor-view.js';
export type { WeightStats } from './safetensors/weight-stats.js';
export { MAX_WINDOW_BYTES } from './safetensors/windows.js';
export { encodeSafetensors, type F32TensorInput } from './safetensors/writer.js';
export { safetensorsLimits };
