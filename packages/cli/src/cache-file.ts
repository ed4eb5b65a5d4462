import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CliError, EXIT_USAGE } from './cli-error.js';

/** A cache file opened for reading byte ranges (never mapped: it may be huge or hostile). */
export interface CacheFileReader {
  readonly path: string;
  readonly size: number;
  read(offset: number, length: number): Uint8Array;
  close(): void;
}

/** Opens `path` for reading; `location` (default `path`) is where it is, if `path` is relative to another folder. */
export function openCacheFile(path: string, location = path): CacheFileReader {
  let fd: number;
  try {
    fd = openSync(location, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new CliError(`${path}: cannot open (${code})`, {
      exitCode: EXIT_USAGE,
      hint: code === 'ENOENT' ? 'check the path' : 'check the file permissions',
      cause: error,
    });
  }
  const size = fstatSync(fd).size;
  return {
    path,
    size,
    read(offset, length) {
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const got = readSync(fd, out, done, length - done, offset + done);
        if (got === 0) break;
        done += got;
      }
      return done === length ? out : out.subarray(0, done);
    },
    close() {
      closeSync(fd);
    },
  };
}
