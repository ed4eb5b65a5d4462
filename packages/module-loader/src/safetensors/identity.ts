import { type BigIntStats, statSync } from 'node:fs';
import { ModuleLoaderError } from '../errors.js';

/**
 * What a warm start trusts instead of reading a weight file: the file at `path` is taken to
 * hold the bytes it held when these fields were recorded. A write through the file system
 * changes mtime (and ctime, which no user call can set back); a replaced file changes ino.
 */
export interface FileIdentity {
  /** Real path (symlinks resolved). */
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
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
    stat = statSync(path, { bigint: true });
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
    ctimeNs: stat.ctimeNs,
  };
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.path === b.path &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}
