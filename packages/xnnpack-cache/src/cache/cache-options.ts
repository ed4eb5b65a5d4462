import { invalidArgument } from '../errors.js';
import type { CpuFeatures } from '../operators/cpu-features.js';
import type { XnnpackRevision } from '../packing/xnnpack-revisions.js';
import { FileStorage, type FileStorageOptions } from '../storage/file-storage.js';
import { HeapStorage } from '../storage/heap-storage.js';
import type { PackedStorage } from '../storage/packed-storage.js';

export interface XNNWeightsCacheOptions extends Partial<Omit<FileStorageOptions, 'path'>> {
  /** Where packed bytes live; overrides `path`. */
  readonly storage?: PackedStorage;
  /**
   * Cache file: a non-empty path makes the cache file-backed (a FileStorage with the other
   * options); empty or omitted means heap only, no file touched.
   */
  readonly path?: string;
  /**
   * XNNPACK revision whose operator-type numbers seed the operators created through this
   * cache (default '92a7ad50', what ExecuTorch main pins); an operator may override it.
   */
  readonly xnnpackRevision?: XnnpackRevision;
  /**
   * The CPU whose XNNPACK GEMM choice gives each layer its default tiling (null: unknown,
   * nr8kr1sr1 for every layer). Default: the running CPU, detected when first needed.
   */
  readonly cpuFeatures?: CpuFeatures | null;
}

/** The storage the options describe: the given one, a cache file, or the heap. */
export function storageFor(options: XNNWeightsCacheOptions): PackedStorage {
  const {
    path,
    storage: _storage,
    xnnpackRevision: _revision,
    cpuFeatures: _cpuFeatures,
    ...fileOptions
  } = options;
  if (path === undefined || path === '') return new HeapStorage();
  if (typeof path !== 'string') invalidArgument('a string', 'options.path', path);
  return new FileStorage({ ...fileOptions, path });
}
