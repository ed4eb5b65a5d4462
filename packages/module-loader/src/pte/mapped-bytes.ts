import { MmapError, openMappedFile } from '@memlayer/mmap-native';
import { ModuleLoaderError } from '../errors.js';

/** A program or data file mapped read-only: its bytes are the file's pages, not a copy. */
export interface MappedBytes {
  readonly bytes: Uint8Array;
  close(): void;
}

/** Typed arrays over one mapping stop at 2 GiB here; larger programs are refused. */
export const MAX_PROGRAM_FILE_BYTES = 2 ** 31 - 1;

/** Maps the whole regular file at `path` (a FIFO, directory or device is refused). */
export function mapFileBytes(path: string, what: string): MappedBytes {
  let file: ReturnType<typeof openMappedFile>;
  try {
    file = openMappedFile(path, { mode: 'r' });
  } catch (error) {
    throw fileError(path, what, error);
  }
  try {
    const size = file.stat().size;
    if (size > MAX_PROGRAM_FILE_BYTES) {
      throw new ModuleLoaderError(
        'ERR_FILE_TOO_LARGE',
        `${path}: Expected at most ${MAX_PROGRAM_FILE_BYTES} bytes for ${what} but received ${size}`,
        { file: path },
      );
    }
    if (size === 0) {
      throw new ModuleLoaderError('ERR_PROGRAM_INVALID', `${path}: an empty ${what}`, {
        file: path,
      });
    }
    const mapping = file.map(0, size, { writable: false });
    return {
      bytes: new Uint8Array(mapping.buffer, 0, size),
      close: () => {
        mapping.close();
        file.close();
      },
    };
  } catch (error) {
    file.close();
    throw error instanceof MmapError ? fileError(path, what, error) : error;
  }
}

function fileError(path: string, what: string, error: unknown): ModuleLoaderError {
  const code =
    error instanceof MmapError && error.code === 'ERR_MMAP_NOT_REGULAR_FILE'
      ? 'ERR_NOT_A_REGULAR_FILE'
      : 'ERR_PROGRAM_IO';
  return new ModuleLoaderError(code, `${path}: cannot read ${what}: ${(error as Error).message}`, {
    file: path,
    cause: error,
  });
}
