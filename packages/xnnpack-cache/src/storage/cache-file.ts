import {
  closeSync,
  constants,
  fdatasyncSync,
  fstatSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { type BackendChoice, type MappedFile, openMappedFile } from '@memlayer/mmap-native';

/**
 * One open cache file: a MappedFile for maps, growth and flock, plus a plain descriptor
 * for bounded reads and appends (mmap-native has no pread/pwrite). Both refer to the same
 * inode; `isReplaced()` tells when compaction or a rebuild renamed another file over the
 * path, so a writer moves to the new file instead of appending to an unlinked one.
 */
export class CacheFile {
  readonly path: string;
  readonly mapped: MappedFile;
  readonly #fd: number;
  readonly #ino: number;
  readonly #dev: number;
  #closed = false;

  private constructor(path: string, mapped: MappedFile, fd: number) {
    this.path = path;
    this.mapped = mapped;
    this.#fd = fd;
    const stat = fstatSync(fd);
    this.#ino = stat.ino;
    this.#dev = stat.dev;
  }

  /**
   * Opens or creates `path` without truncating it: another process may have it mapped,
   * and truncating a mapped file is a SIGBUS for that process.
   */
  static open(path: string, backend: BackendChoice | undefined): CacheFile {
    for (let attempt = 0; ; attempt++) {
      const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o666);
      let mapped: MappedFile | null = null;
      try {
        mapped = openMappedFile(
          path,
          backend === undefined ? { mode: 'w+' } : { mode: 'w+', backend },
        );
        const file = new CacheFile(path, mapped, fd);
        // A rename between the two opens would leave them on different inodes.
        if (!file.isReplaced() || attempt >= 8) return file;
        file.close();
      } catch (error) {
        mapped?.close();
        closeSync(fd);
        throw error;
      }
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  size(): number {
    return fstatSync(this.#fd).size;
  }

  /** Whether the path now names another file (or none). */
  isReplaced(): boolean {
    try {
      const stat = statSync(this.path);
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

  datasync(): void {
    fdatasyncSync(this.#fd);
  }

  /** Runs `fn` under an exclusive flock; the lock is never held beyond `fn`. */
  withLock<T>(fn: () => T): T {
    this.mapped.lock('exclusive');
    try {
      return fn();
    } finally {
      this.mapped.unlock();
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.mapped.close();
    closeSync(this.#fd);
  }
}
