import type { BackendChoice } from '@memlayer/mmap-native';
import { invalidArgument } from '../errors.js';
import { DEFAULT_CACHE_IDENTITY } from './identity.js';
import type { CacheFormat } from './index-io.js';
import { DEFAULT_LOAD_WINDOW_BYTES } from './load-windows.js';

export type VerifyMode = 'index' | 'full';

/** When the durable commit of new entries happens (see the README, "Commit"). */
export type CommitMode = 'deferred' | 'finalize';

export interface FileStorageOptions {
  /** The cache file; created when missing, never truncated. */
  readonly path: string;
  /**
   * 'index' (default): trust entry data once the trailer's CRC and bounds check out.
   * 'full': also check every entry's data CRC32C at load; a corrupt entry is dropped
   * (and repacked by its operator), never handed to a kernel.
   */
  readonly verify?: VerifyMode;
  /** Cache identity written to and expected in v3 trailers. */
  readonly identity?: string;
  /**
   * Format of files this storage creates (3 by default; 2 = ExecuTorch-compatible). An
   * existing file keeps its format: a v2 file stays v2.
   */
  readonly format?: CacheFormat;
  /** mmap-native backend ('auto' by default, or MEMLAYER_MMAP_BACKEND). */
  readonly backend?: BackendChoice;
  /**
   * Compact the file at close when orphan bytes exceed this fraction of it (0 < t <= 1).
   * Off by default.
   */
  readonly autoCompactThreshold?: number;
  /** Follow a symlink at the cache path's last component (default false: refused, ELOOP). */
  readonly followSymlinks?: boolean;
  /** Mode bits of a cache file this storage creates (default 0o600; the umask applies). */
  readonly fileMode?: number;
  /**
   * Longest wait for the file lock, in ms (default 500). A busy lock (ExecuTorch holds
   * LOCK_SH on a cache it loaded for its whole life) sends new entries to the heap.
   */
  readonly lockTimeoutMs?: number;
  /**
   * 'deferred' (default): finalize returns once weights are packed; the commit runs in the
   * background, at flush(), at close, or at process exit. 'finalize': commit at finalize.
   */
  readonly commit?: CommitMode;
  /**
   * Disk budget of the cache file in bytes (default none): entries that would not fit go
   * to the heap ('over-budget'), and close() compacts away least recently used entries.
   */
  readonly maxFileBytes?: number | null;
  /** Span of one load mapping (default 32 MiB); an entry never crosses one. */
  readonly loadWindowBytes?: number;
}

export interface ResolvedFileStorageOptions {
  readonly path: string;
  readonly verify: VerifyMode;
  readonly identity: string;
  readonly format: CacheFormat;
  readonly backend: BackendChoice | undefined;
  readonly autoCompactThreshold: number | undefined;
  readonly followSymlinks: boolean;
  readonly fileMode: number;
  readonly lockTimeoutMs: number;
  readonly commit: CommitMode;
  readonly maxFileBytes: number | null;
  readonly loadWindowBytes: number;
}

/** Packed weights are model weights: readable by their owner only unless asked otherwise. */
export const DEFAULT_FILE_MODE = 0o600;
export const DEFAULT_LOCK_TIMEOUT_MS = 500;

const isCount = (value: unknown, min: number): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= min;

export function resolveFileStorageOptions(options: FileStorageOptions): ResolvedFileStorageOptions {
  if (options === null || typeof options !== 'object') {
    invalidArgument('an options object', 'options', options);
  }
  const { path } = options;
  if (typeof path !== 'string' || path === '') {
    invalidArgument('a non-empty path', 'options.path', path);
  }
  const verify = options.verify ?? 'index';
  if (verify !== 'index' && verify !== 'full') {
    invalidArgument("'index' or 'full'", 'options.verify', verify);
  }
  const format = options.format ?? 3;
  if (format !== 2 && format !== 3) invalidArgument('2 or 3', 'options.format', format);
  const identity = options.identity ?? DEFAULT_CACHE_IDENTITY;
  if (typeof identity !== 'string' || identity === '') {
    invalidArgument('a non-empty string', 'options.identity', identity);
  }
  const threshold = options.autoCompactThreshold;
  if (
    threshold !== undefined &&
    (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))
  ) {
    invalidArgument('a number in (0, 1]', 'options.autoCompactThreshold', threshold);
  }
  const followSymlinks = options.followSymlinks ?? false;
  if (typeof followSymlinks !== 'boolean') {
    invalidArgument('a boolean', 'options.followSymlinks', followSymlinks);
  }
  const fileMode = options.fileMode ?? DEFAULT_FILE_MODE;
  if (!isCount(fileMode, 0) || fileMode > 0o777) {
    invalidArgument('file mode bits (0 to 0o777)', 'options.fileMode', fileMode);
  }
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (!isCount(lockTimeoutMs, 0)) {
    invalidArgument('a non-negative integer', 'options.lockTimeoutMs', lockTimeoutMs);
  }
  const commit = options.commit ?? 'deferred';
  if (commit !== 'deferred' && commit !== 'finalize') {
    invalidArgument("'deferred' or 'finalize'", 'options.commit', commit);
  }
  const maxFileBytes = options.maxFileBytes ?? null;
  if (maxFileBytes !== null && !isCount(maxFileBytes, 1)) {
    invalidArgument('a positive integer or null', 'options.maxFileBytes', maxFileBytes);
  }
  const loadWindowBytes = options.loadWindowBytes ?? DEFAULT_LOAD_WINDOW_BYTES;
  if (!isCount(loadWindowBytes, 1)) {
    invalidArgument('a positive integer', 'options.loadWindowBytes', loadWindowBytes);
  }
  return {
    path,
    verify,
    identity,
    format,
    backend: options.backend,
    autoCompactThreshold: threshold,
    followSymlinks,
    fileMode,
    lockTimeoutMs,
    commit,
    maxFileBytes,
    loadWindowBytes,
  };
}
