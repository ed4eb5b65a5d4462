import {
  type BackendChoice,
  type BackgroundWrite,
  type FileStat,
  type LockKind,
  type MappedFile,
  openMappedFile,
} from '@memlayer/mmap-native';
import { nodeFs } from '../node-fs.js';
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

/**
 * One open cache file: one descriptor, mmap-native's MappedFile, opened without blocking
 * with the symlink policy applied and checked to be a regular file. It serves maps, growth,
 * flock with a bounded wait (or handed over to a thread-pool task), reads, appends, fstat, fdatasync and
 * the ftruncate that cuts this process's own unused chunk tail. `isReplaced()` tells when
 * compaction or a rebuild renamed another file over the path, so a writer moves to the new
 * file instead of appending to an unlinked one.
 */
export class CacheFile {
  readonly path: string;
  readonly mapped: MappedFile;
  readonly #ino: number;
  readonly #dev: number;
  readonly #followSymlinks: boolean;
  #closed = false;
  /** A thread-pool task that holds this file's lock and releases it when it is over. */
  #lockHolder: BackgroundWrite | null = null;

  private constructor(path: string, mapped: MappedFile, stat: FileStat, followSymlinks: boolean) {
    this.path = path;
    this.#followSymlinks = followSymlinks;
    this.mapped = mapped;
    this.#ino = stat.ino;
    this.#dev = stat.dev;
  }

  /**
   * Opens (or creates) `path` without truncating it: another process may have it mapped,
   * and truncating a mapped file is a SIGBUS for that process. The open never blocks (a
   * FIFO at the path cannot hang it); anything but a regular file is refused.
   */
  static open(path: string, options: CacheFileOptions): CacheFile {
    let mapped: MappedFile;
    try {
      mapped = openMappedFile(path, {
        mode: options.create === false ? 'r+' : 'w+',
        permissions: options.fileMode,
        followSymlinks: options.followSymlinks,
        ...(options.backend === undefined ? {} : { backend: options.backend }),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_MMAP_NOT_REGULAR_FILE') {
        throw new StorageFallback('open-failed', `${path} is not a regular file`, {
          cause: error,
        });
      }
      throw error;
    }
    try {
      return new CacheFile(path, mapped, mapped.stat(), options.followSymlinks);
    } catch (error) {
      mapped.close();
      throw error;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  size(): number {
    return this.mapped.size();
  }

  stat(): FileStat {
    return this.mapped.stat();
  }

  /** Whether the path now names another file (or none, or a symlink when they are refused). */
  isReplaced(): boolean {
    try {
      const stat = this.#followSymlinks
        ? nodeFs().statSync(this.path)
        : nodeFs().lstatSync(this.path);
      return stat.ino !== this.#ino || stat.dev !== this.#dev;
    } catch {
      return true;
    }
  }

  /** Up to `length` bytes at `offset` (fewer at end of file; the codec reports short reads). */
  read(offset: number, length: number): Uint8Array {
    return this.mapped.read(offset, length);
  }

  write(bytes: Uint8Array, offset: number): void {
    this.mapped.write(bytes, offset);
  }

  /** Cuts the file to `size` bytes (only ever a tail no one else maps or references). */
  truncate(size: number): void {
    this.mapped.truncate(size);
  }

  datasync(): void {
    this.mapped.datasync();
  }

  /**
   * Runs `fn` under an flock of `kind`, held never beyond `fn` unless `fn` hands it over to
   * a background task (`handOver(task)`: the task releases it, see mmap-native's
   * writeInBackground). The wait for the lock is bounded by `timeoutMs`: ExecuTorch holds
   * LOCK_SH on a loaded cache for its whole life, so an unbounded LOCK_EX could block this
   * thread for as long as that process runs. Throws StorageFallback 'lock-busy' when the
   * lock stays busy.
   */
  withLock<T>(
    kind: LockKind,
    timeoutMs: number,
    fn: (handOver: (task: BackgroundWrite) => void) => T,
  ): T {
    this.#awaitLockHolder();
    this.#acquire(kind, timeoutMs);
    let handedOver = false;
    try {
      return fn((task) => {
        this.#lockHolder = task;
        handedOver = true;
      });
    } finally {
      if (!handedOver) this.mapped.unlock();
    }
  }

  /**
   * Waits for a task that holds this file's lock. flock belongs to the open file, so a lock
   * taken through this descriptor now would not exclude the task but share its lock.
   */
  #awaitLockHolder(): void {
    const holder = this.#lockHolder;
    if (holder === null) return;
    this.#lockHolder = null;
    try {
      holder.wait();
    } catch {
      // The task's owner reports its failure; the lock is released either way.
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
  }
}
