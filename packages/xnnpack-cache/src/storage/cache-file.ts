import {
  closeSync,
  constants,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import {
  type BackendChoice,
  type LockKind,
  type MappedFile,
  openMappedFile,
} from '@memlayer/mmap-native';
import { StorageFallback } from './fallback.js';

export interface CacheFileOptions {
  readonly backend?: BackendChoice | undefined;
  /** false (the default policy): a symlink as the last path component is refused (ELOOP). */
  readonly followSymlinks: boolean;
  /** Mode bits of a file this call creates (the umask applies). */
  readonly fileMode: number;
  /** Create the file when missing (default true; compaction never creates). */
  readonly create?: boolean;
}

/** Linux names every open descriptor here: reopening through it reaches the same inode. */
const FD_FOLDER = '/proc/self/fd';

/**
 * One open cache file. A plain descriptor, opened without blocking with the symlink policy
 * applied and checked to be a regular file, serves reads, appends, fstat, fdatasync and the
 * ftruncate that cuts this process's own unused chunk tail (mmap-native never shrinks a
 * file). A MappedFile reopened through /proc/self/fd (so it is the same inode) serves maps,
 * growth and flock with a bounded wait. `isReplaced()` tells when compaction or a rebuild
 * renamed another file over the path, so a writer moves to the new file instead of
 * appending to an unlinked one.
 */
export class CacheFile {
  readonly path: string;
  readonly mapped: MappedFile;
  readonly #fd: number;
  readonly #ino: number;
  readonly #dev: number;
  readonly #followSymlinks: boolean;
  #closed = false;

  private constructor(
    path: string,
    mapped: MappedFile,
    fd: number,
    stat: Stats,
    followSymlinks: boolean,
  ) {
    this.path = path;
    this.#followSymlinks = followSymlinks;
    this.mapped = mapped;
    this.#fd = fd;
    this.#ino = stat.ino;
    this.#dev = stat.dev;
  }

  /**
   * Opens (or creates) `path` without truncating it: another process may have it mapped,
   * and truncating a mapped file is a SIGBUS for that process. O_NONBLOCK keeps a FIFO at
   * the path from blocking the open; anything but a regular file is refused.
   */
  static open(path: string, options: CacheFileOptions): CacheFile {
    let flags = constants.O_RDWR | constants.O_NONBLOCK;
    if (!options.followSymlinks) flags |= constants.O_NOFOLLOW;
    if (options.create !== false) flags |= constants.O_CREAT;
    const fd = openSync(path, flags, options.fileMode);
    let mapped: MappedFile | null = null;
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) {
        throw new StorageFallback('open-failed', `${path} is not a regular file`);
      }
      // Through /proc/self/fd the second open cannot land on another inode (a rename or a
      // symlink swapped in between); elsewhere the path is reopened and compared.
      const viaFd = existsSync(FD_FOLDER) ? `${FD_FOLDER}/${fd}` : path;
      mapped = openMappedFile(
        viaFd,
        options.backend === undefined ? { mode: 'r+' } : { mode: 'r+', backend: options.backend },
      );
      const file = new CacheFile(path, mapped, fd, stat, options.followSymlinks);
      if (viaFd === path && file.isReplaced()) {
        throw new StorageFallback('open-failed', `${path} was replaced while it was opened`);
      }
      return file;
    } catch (error) {
      mapped?.close();
      closeSync(fd);
      throw error;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  size(): number {
    return fstatSync(this.#fd).size;
  }

  stat(): Stats {
    return fstatSync(this.#fd);
  }

  /** Whether the path now names another file (or none, or a symlink when they are refused). */
  isReplaced(): boolean {
    try {
      const stat = this.#followSymlinks ? statSync(this.path) : lstatSync(this.path);
      return stat.ino !== this.#ino || stat.dev !== this.#dev;
    } catch {
      return true;
    }
  }

  /** Up to `length` bytes at `offset` (fewer at end of file; the codec reports short reads). */
  read(offset: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.#fd, out, done, length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return done === length ? out : out.subarray(0, done);
  }

  write(bytes: Uint8Array, offset: number): void {
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, offset + done);
    }
  }

  /** Cuts the file to `size` bytes (only ever a tail no one else maps or references). */
  truncate(size: number): void {
    ftruncateSync(this.#fd, size);
  }

  datasync(): void {
    fdatasyncSync(this.#fd);
  }

  /** fdatasync on libuv's thread pool: the JavaScript thread keeps running. */
  datasyncInBackground(): Promise<void> {
    return new Promise((resolve, reject) => {
      fdatasync(this.#fd, (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Runs `fn` under an flock of `kind`, held never beyond `fn`. The wait for the lock is
   * bounded by `timeoutMs`: ExecuTorch holds LOCK_SH on a loaded cache for its whole life,
   * so an unbounded LOCK_EX could block this thread for as long as that process runs.
   * Throws StorageFallback 'lock-busy' when the lock stays busy.
   */
  withLock<T>(kind: LockKind, timeoutMs: number, fn: () => T): T {
    this.#acquire(kind, timeoutMs);
    try {
      return fn();
    } finally {
      this.mapped.unlock();
    }
  }

  #acquire(kind: LockKind, timeoutMs: number): void {
    try {
      this.mapped.lock(kind, { timeoutMs });
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_MMAP_LOCK_TIMEOUT') throw error;
      throw new StorageFallback(
        'lock-busy',
        `Another process held the lock of ${this.path} for more than ${timeoutMs} ms`,
        { cause: error },
      );
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.mapped.close();
    closeSync(this.#fd);
  }
}
