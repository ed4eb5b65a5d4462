export type {
  Advice,
  Backend,
  BackendFile,
  BackendMapping,
  BackendName,
  BackendOpenOptions,
  BackgroundWrite,
  FileStat,
  LockKind,
  OpenMode,
  Residency,
  SyncMode,
  WriteEnd,
  WritePart,
} from './backend.js';
export { addonCandidates, BUILD_COMMAND, sourceBuildCommand } from './backends/posix/addon.js';
export { type Crc32cImplementation, crc32c, crc32cImplementation } from './crc32c.js';
export {
  MMAP_ERROR_CODES,
  MmapError,
  type MmapErrorCode,
  type MmapErrorDetails,
} from './errors.js';
export { NO_GC_WINDOW_BYTES } from './gc-window.js';
export type { GemmIsa } from './kernels/gemm-isa.js';
export {
  type GemmF32Options,
  type GemmF32Settings,
  type GemmKernels,
  loadGemmKernels,
  type PackedGemmLayout,
} from './kernels/gemm-kernels.js';
export type { PreparedGemmF32 } from './kernels/prepared-gemm.js';
export type { GemmChainLayer, PreparedGemmChainF32 } from './kernels/prepared-gemm-chain.js';
export { type X86Cpu, x86Cpu } from './kernels/x86-cpu.js';
export {
  liveMappingCount,
  MAP_COUNT_HEADROOM,
  MAX_MAP_COUNT_PATH,
  readMaxMapCount,
} from './map-count.js';
export {
  type GrowOptions,
  type LockOptions,
  type MapOptions,
  MappedFile,
  type OpenMappedFileOptions,
  openMappedFile,
} from './mapped-file.js';
export { Mapping, type ResidencyOptions } from './mapping.js';
export { pageSize } from './page-size.js';
export { prefault } from './prefault.js';
export {
  BACKEND_ENV,
  type BackendChoice,
  getBackend,
  HEAP_FALLBACK_WARNING,
} from './select-backend.js';
export {
  type MappingMemoryStats,
  mappingMemoryStats,
  readSmapsTable,
  type SmapsTable,
  smapsOf,
} from './smaps.js';
export {
  ARGUMENT_ERROR_CODES,
  type ArgumentError,
  type ArgumentErrorCode,
  type FileOffset,
} from './validate.js';
export {
  loadXnnGraphReader,
  type XnnGraphColumns,
  type XnnGraphReader,
} from './xnn-graph/xnn-graph-reader.js';
