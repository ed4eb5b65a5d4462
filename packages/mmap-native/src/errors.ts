import { nodeUtil } from './node-builtins.js';

/**
 * The codes of MmapError that are not errno names (errno failures carry the name Node
 * gives the errno: 'ENOSPC', 'EAGAIN', 'ELOOP', ...).
 */
export const MMAP_ERROR_CODES = [
  /** map() of bytes past end-of-file. */
  'ERR_MMAP_PAST_EOF',
  /** sync/advise/residency on a closed mapping. */
  'ERR_MMAP_CLOSED',
  /** open() of a FIFO, directory, device or socket. */
  'ERR_MMAP_NOT_REGULAR_FILE',
  /** lock() with timeoutMs did not get the lock in time. */
  'ERR_MMAP_LOCK_TIMEOUT',
  /** 'posix' forced but the addon is not built. */
  'ERR_MMAP_ADDON_NOT_BUILT',
  /** 'posix' forced on a platform without it (Windows). */
  'ERR_MMAP_UNSUPPORTED_PLATFORM',
  /** 'posix' forced where external ArrayBuffers are forbidden (Electron's memory cage). */
  'ERR_MMAP_EXTERNAL_BUFFERS_NOT_ALLOWED',
  /** A size beyond 2^53-1 bytes. */
  'ERR_MMAP_SIZE_UNSAFE',
  /** The runtime refused to create the mapping's ArrayBuffer. */
  'ERR_MMAP_BUFFER',
  /** The runtime refused to detach the mapping's ArrayBuffer on close. */
  'ERR_MMAP_DETACH',
] as const;
export type MmapErrorCode = (typeof MMAP_ERROR_CODES)[number];

/** Fields of an {@link MmapError}; `code` is derived from `errno` when absent. */
export interface MmapErrorDetails {
  code?: string | undefined;
  /** Positive POSIX errno (as in `os.constants.errno`), absent for non-system errors. */
  errno?: number | undefined;
  syscall?: string | undefined;
  path?: string | undefined;
}

/**
 * The one error class of this package, thrown by both backends and by the native addon
 * (which receives this constructor at load time, so its errors are real instances).
 * Shaped like Node's own system errors: `code` ('ENOSPC', 'EAGAIN', ...), `errno`,
 * `syscall` and `path`. Codes that are not errno names start with `ERR_MMAP_`.
 */
export class MmapError extends Error {
  override name = 'MmapError';
  readonly code: string;
  readonly errno: number | undefined;
  readonly syscall: string | undefined;
  readonly path: string | undefined;

  constructor(message: string | undefined, details: MmapErrorDetails) {
    const code =
      details.code ??
      (details.errno === undefined ? 'ERR_MMAP' : nodeUtil().getSystemErrorName(-details.errno));
    super(message ?? systemMessage(code, details));
    this.code = code;
    this.errno = details.errno;
    this.syscall = details.syscall;
    this.path = details.path;
  }

  /** An error for a failed system call, e.g. `fromErrno(28, 'posix_fallocate', path)`. */
  static fromErrno(errno: number, syscall: string, path?: string): MmapError {
    return new MmapError(undefined, { errno, syscall, path });
  }

  /** Converts an error thrown by `node:fs` (negative libuv errno) into an MmapError. */
  static fromNodeError(error: unknown, syscall: string, path: string): MmapError {
    if (error instanceof MmapError) return error;
    const nodeError = error as NodeJS.ErrnoException;
    if (typeof nodeError?.errno === 'number') {
      return new MmapError(undefined, {
        errno: Math.abs(nodeError.errno),
        syscall: nodeError.syscall ?? syscall,
        path,
      });
    }
    const converted = new MmapError(String(nodeError?.message ?? error), {
      code: typeof nodeError?.code === 'string' ? nodeError.code : undefined,
      syscall,
      path,
    });
    converted.cause = error;
    return converted;
  }
}

// Node's own format: "ENOSPC: no space left on device, posix_fallocate '/tmp/x'".
function systemMessage(code: string, details: MmapErrorDetails): string {
  const description =
    details.errno === undefined
      ? undefined
      : nodeUtil().getSystemErrorMap().get(-details.errno)?.[1];
  let message = description === undefined ? code : `${code}: ${description}`;
  if (details.syscall !== undefined) message += `, ${details.syscall}`;
  if (details.path !== undefined) message += ` '${details.path}'`;
  return message;
}
