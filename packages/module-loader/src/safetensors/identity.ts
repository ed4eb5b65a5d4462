import type { BigIntStats } from 'node:fs';
import { ModuleLoaderError } from '../errors.js';
import { nodeFs } from '../files/node-fs.js';

/**
 * A weight file as stat'ed at program load. Checked again when the file is first opened, so
 * a file replaced or resized in between is refused instead of read (ERR_WEIGHTS_CHANGED).
 * Never trusted in place of the bytes: every load reads and hashes them.
 */
export interface FileIdentity {
  /** Real path (symlinks resolved). */
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: number;
  readonly mtimeNs: bigint;
}

/**
 * stat(2) with nanosecond times; a non-regular file is ERR_NOT_A_REGULAR_FILE. `known` is a
 * stat of `path` the caller already made (an lstat of a path that is no symlink).
 */
export function statIdentity(
  path: string,
  ctx: { file: string; field: string },
  known?: BigIntStats,
): FileIdentity {
  if (known !== undefined) return identityOf(path, known, ctx);
  let stat: BigIntStats;
  try {
    stat = nodeFs().statSync(path, { bigint: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new ModuleLoaderError(
      'ERR_PROGRAM_IO',
      `${ctx.file}: ${ctx.field}: cannot stat ${path} (${code})`,
      {
        ...ctx,
        cause: error,
      },
    );
  }
  return identityOf(path, stat, ctx);
}

function identityOf(
  path: string,
  stat: BigIntStats,
  ctx: { file: string; field: string },
): FileIdentity {
  if (!stat.isFile()) {
    throw new ModuleLoaderError(
      'ERR_NOT_A_REGULAR_FILE',
      `${ctx.file}: ${ctx.field}: Expected a regular file for ${path}`,
      ctx,
    );
  }
  return {
    path,
    dev: stat.dev,
    ino: stat.ino,
    size: Number(stat.size),
    mtimeNs: stat.mtimeNs,
  };
}
