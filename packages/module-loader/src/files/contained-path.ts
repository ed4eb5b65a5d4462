import type { BigIntStats } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { invalidArgument, ModuleLoaderError } from '../errors.js';
import { nodeFs } from './node-fs.js';

/** Where a path came from, for error messages: the manifest and the JSON field naming it. */
export interface FileContext {
  file: string;
  field: string;
}

/** Throws ERR_PATH_INVALID when `path` has a NUL byte (the OS would cut the path there). */
export function assertNoNul(path: string, what: string, ctx: FileContext): void {
  if (typeof path !== 'string') invalidArgument('a path string', what, path);
  if (path.includes('\0')) {
    throw new ModuleLoaderError(
      'ERR_PATH_INVALID',
      `${ctx.file}: ${ctx.field}: Expected a path without NUL bytes for ${what} but received ${JSON.stringify(path.slice(0, 80))}`,
      { file: ctx.file, field: ctx.field },
    );
  }
}

/**
 * Resolves `relativePath` under `rootDir` and returns its real path (symlinks resolved),
 * which must lie inside the real path of `rootDir`. A symlink inside the folder that
 * points inside stays fine; one that leads out (file or any folder on the way) is
 * ERR_PATH_OUTSIDE_PROGRAM. A path that does not resolve (missing file, dangling link)
 * is ERR_PROGRAM_IO: nothing outside is ever opened.
 */
export function resolveContainedPath(
  rootDir: string,
  relativePath: string,
  ctx: FileContext,
): string {
  return new ContainedPaths(rootDir, ctx).resolve(relativePath, ctx).path;
}

/** A path resolved inside a folder, with the stat that proved it when one was made. */
export interface ContainedPath {
  readonly path: string;
  /** lstat of `path` when it is a file name directly in the folder and no symlink. */
  readonly stat: BigIntStats | undefined;
}

/**
 * resolveContainedPath for many paths of one folder: the folder's real path is resolved
 * once. A plain name (no separator) whose lstat shows no symlink is, as the folder is real,
 * its own real path: one lstat instead of a realpath, and that stat serves as the file's.
 */
export class ContainedPaths {
  readonly #root: string;

  constructor(rootDir: string, ctx: FileContext) {
    assertNoNul(rootDir, 'the program folder', ctx);
    this.#root = realPath(rootDir, ctx);
  }

  resolve(relativePath: string, ctx: FileContext): ContainedPath {
    assertNoNul(relativePath, ctx.field, ctx);
    if (isAbsolute(relativePath)) throw outside(relativePath, ctx, 'it is absolute');
    const root = this.#root;
    if (isPlainName(relativePath)) {
      const path = join(root, relativePath);
      const stat = nodeFs().lstatSync(path, { bigint: true, throwIfNoEntry: false });
      if (stat !== undefined && !stat.isSymbolicLink()) return { path, stat };
    }
    const resolved = realPath(join(root, relativePath), ctx);
    const rel = relative(root, resolved);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw outside(relativePath, ctx, `it resolves to ${resolved}`);
    }
    return { path: resolved, stat: undefined };
  }
}

/** A single path component naming an entry of the folder itself (not . or ..). */
function isPlainName(path: string): boolean {
  return path !== '.' && path !== '..' && !path.includes('/') && !path.includes(sep);
}

function realPath(path: string, ctx: FileContext): string {
  try {
    return nodeFs().realpathSync.native(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new ModuleLoaderError(
      'ERR_PROGRAM_IO',
      `${ctx.file}: ${ctx.field}: cannot resolve ${path} (${code})`,
      {
        file: ctx.file,
        field: ctx.field,
        cause: error,
      },
    );
  }
}

function outside(relativePath: string, ctx: FileContext, why: string): ModuleLoaderError {
  return new ModuleLoaderError(
    'ERR_PATH_OUTSIDE_PROGRAM',
    `${ctx.file}: ${ctx.field}: Expected a path inside the program's folder but received ${JSON.stringify(relativePath)} (${why})`,
    { file: ctx.file, field: ctx.field },
  );
}
