export { PACKED_ALLOCATION_ALIGNMENT, roundUp } from './alignment.js';
export type { XNNWeightsCacheOptions } from './cache/cache-options.js';
export {
  type CacheAcquireOptions,
  type WeightsCacheHandle,
  XNNWeightsCacheManager,
  type XNNWeightsCacheManagerOptions,
} from './cache/manager.js';
export type { PackedDataMeta } from './cache/packed-data-meta.js';
export {
  type LookUpKey,
  type NamedWeightsCacheProvider,
  NOT_FOUND,
  type PackedShapeKey,
  type WeightsCacheProvider,
} from './cache/provider.js';
export type { WeightsCacheStats } from './cache/stats.js';
export { XNNWeightsCache } from './cache/weights-cache.js';
export { WeightsCacheError, type WeightsCacheErrorCode } from './errors.js';
export {
  InMemoryNamedDataMap,
  type NamedDataMap,
  type TensorView,
  tensorView,
} from './named-data-map.js';
export {
  type Arm64Core,
  type Arm64CpuFeatures,
  type CpuFeatures,
  describeCpuFeatures,
  parseCpuFeatures,
  type X64CpuFeatures,
} from './operators/cpu-features.js';
export {
  arm64FromCpuinfo,
  type CpuFeaturesDetection,
  detectCpuFeatures,
  x64FromCpuinfo,
} from './operators/cpuinfo.js';
export {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  type FullyConnectedOptions,
  type WeightsSource,
} from './operators/fully-connected.js';
export {
  createFullyConnectedNcF32ByName,
  createMissedFullyConnectedNcF32ByName,
  type FullyConnectedByNameOptions,
  type FullyConnectedEntryOptions,
  findFullyConnectedNcF32ByEntryName,
  findFullyConnectedNcF32ByName,
  fullyConnectedNcF32At,
} from './operators/fully-connected-by-name.js';
export {
  type FullyConnectedChain,
  fullyConnectedChain,
} from './operators/fully-connected-chain.js';
export type { KernelChoice } from './operators/kernel-choice.js';
export type { OutputRange } from './operators/output-range.js';
export { DEFAULT_GEMM_TILING, GEMM_TILINGS, type GemmTiling } from './operators/tiling.js';
export {
  type XnnpackGemmConfigs,
  xnnpackGemmConfigs,
  xnnpackGemmTiling,
  xnnUseNr2,
} from './operators/xnnpack-gemm-tiling.js';
export { fnv1a32, PACK_F32_GEMM_GOI_W_FINGERPRINT } from './packing/fingerprint.js';
export {
  type GemmGoiLayout,
  type GemmGoiShape,
  type GemmPadding,
  gemmGoiLayout,
  packedSize,
  packF32GemmGoiW,
} from './packing/gemm-goi.js';
export {
  LAYOUT_FLAG_TRANSPOSED,
  layoutsEqual,
  type PackingLayout,
} from './packing/packing-layout.js';
export { type PackingStats, packingStats, resetPackingStats } from './packing/packing-stats.js';
export {
  type RevisionFit,
  type RevisionsFittingOptions,
  revisionsFittingEntry,
  type SeededEntry,
} from './packing/revisions-fitting.js';
export {
  type FullyConnectedSeedInput,
  fullyConnectedSeed,
  fullyConnectedSeedOf,
  OPERATOR_TYPE_FULLY_CONNECTED_NC_F32,
} from './packing/seed.js';
export {
  DEFAULT_XNNPACK_REVISION,
  isXnnpackRevision,
  XNNPACK_REVISIONS,
  type XnnpackRevision,
} from './packing/xnnpack-revisions.js';
export { type CompactOptions, type CompactResult, compact } from './storage/compact.js';
export {
  FileStorage,
  type FileStorageInfo,
  type FileStorageOptions,
  type VerifyMode,
} from './storage/file-storage.js';
export { HeapStorage, type HeapStorageOptions } from './storage/heap-storage.js';
export { DEFAULT_CACHE_IDENTITY } from './storage/identity.js';
export type { CacheFormat } from './storage/index-io.js';
export type { CacheMemoryStats } from './storage/memory-stats.js';
export type {
  LoadedEntries,
  LoadedEntryFields,
  OpenContext,
  PackedRegion,
  PackedStorage,
  ReserveOptions,
  StorageStats,
  StoredEntry,
} from './storage/packed-storage.js';
export { WARNING_TYPE, type WeightsCacheWarningCode } from './storage/warnings.js';
export { PACKAGE_VERSION } from './version.js';
