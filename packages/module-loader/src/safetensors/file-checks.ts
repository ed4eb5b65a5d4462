import { ModuleLoaderError } from '../errors.js';

/** ERR_WEIGHTS_CHANGED: the file is no longer what the program was loaded with. */
export function changed(path: string, why: string): ModuleLoaderError {
  return new ModuleLoaderError('ERR_WEIGHTS_CHANGED', `${path}: ${why}; load the program again`, {
    file: path,
  });
}

/** ERR_PROGRAM_IO naming the file, with the errno or MmapError code (both are `code`). */
export function ioError(path: string, what: string, error: unknown): ModuleLoaderError {
  if (error instanceof ModuleLoaderError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new ModuleLoaderError(
    'ERR_PROGRAM_IO',
    `${path}: ${what} (${code ?? 'error'}: ${(error as Error)?.message})`,
    { file: path, cause: error },
  );
}
