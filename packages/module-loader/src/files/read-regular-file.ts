import { invalidArgument, ModuleLoaderError } from '../errors.js';
import { assertNoNul, type FileContext } from './contained-path.js';
import { nodeFs } from './node-fs.js';

/**
 * Reads a whole regular file of at most `maxBytes`. The open never blocks (O_NONBLOCK:
 * a FIFO with no writer would hang a plain open), the descriptor is checked with fstat
 * (only regular files: /dev/zero or a FIFO is ERR_NOT_A_REGULAR_FILE), the size is
 * checked before reading (ERR_FILE_TOO_LARGE), and at most the fstat size is read, so a
 * file that grows meanwhile is cut there and memory stays bounded.
 */
export function readRegularFile(path: string, maxBytes: number, ctx: FileContext): Uint8Array {
  assertNoNul(path, ctx.field, ctx);
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    invalidArgument('a non-negative integer', 'maxBytes', maxBytes);
  }
  const { closeSync, constants, fstatSync, openSync, readSync } = nodeFs();
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw ioError(path, 'cannot open', error, ctx);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new ModuleLoaderError(
        'ERR_NOT_A_REGULAR_FILE',
        `${ctx.file}: ${ctx.field}: Expected a regular file for ${path} but received ${kindOf(stat)}`,
        { file: ctx.file, field: ctx.field },
      );
    }
    const size = Number(stat.size);
    if (size > maxBytes) {
      throw new ModuleLoaderError(
        'ERR_FILE_TOO_LARGE',
        `${ctx.file}: ${ctx.field}: Expected at most ${maxBytes} bytes for ${path} but received ${stat.size}`,
        { file: ctx.file, field: ctx.field },
      );
    }
    const bytes = new Uint8Array(size);
    let filled = 0;
    while (filled < bytes.length) {
      let count: number;
      try {
        count = readSync(fd, bytes, filled, bytes.length - filled, filled);
      } catch (error) {
        throw ioError(path, 'cannot read', error, ctx);
      }
      if (count === 0) break; // shrank while read: keep what is there
      filled += count;
    }
    return filled === bytes.length ? bytes : bytes.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

function kindOf(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'another kind of file';
}

function ioError(path: string, what: string, error: unknown, ctx: FileContext): ModuleLoaderError {
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  return new ModuleLoaderError('ERR_PROGRAM_IO', `${path}: ${what} (${code})`, {
    file: ctx.file,
    field: ctx.field,
    cause: error,
  });
}
