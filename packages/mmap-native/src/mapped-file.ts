import {
  type BackendFile,
  type BackendName,
  type BackgroundWrite,
  type FileStat,
  LOCK_KINDS,
  type LockKind,
  OPEN_MODES,
  type OpenMode,
  type WriteEnd,
  type WritePart,
} from './backend.js';
import { MmapError } from './errors.js';
import { waitForLock } from './lock-wait.js';
import { Mapping } from './mapping.js';
import { maxBufferLength, nodeOs } from './node-builtins.js';
import { type BackendChoice, getBackend } from './select-backend.js';
import {
  expectArray,
  expectBoolean,
  expectLength,
  expectObject,
  expectOffset,
  expectOneOf,
  expectPath,
  expectPermissions,
  expectTimeout,
  expectUint8Array,
  type FileOffset,
} from './validate.js';

export interface OpenMappedFileOptions {
  /** Default 'r'. See {@link OpenMode}. */
  mode?: OpenMode;
  /** Default: MEMLAYER_MMAP_BACKEND, else 'auto'. */
  backend?: BackendChoice;
  /** File mode bits for a created file (default 0o666, minus the umask). */
  permissions?: number;
  /**
   * false: refuse a symlink as the last path component (O_NOFOLLOW; MmapError 'ELOOP').
   * Symlinks in the directories above are still followed. Default true.
   */
  followSymlinks?: boolean;
}

export interface MapOptions {
  /**
   * true: MAP_SHARED read-write, writes reach the file. false: "read-only", mapped
   * MAP_PRIVATE so a stray write only dirties a private copy-on-write page.
   * Default: true unless the file was opened with mode 'r'.
   */
  writable?: boolean;
}

export interface GrowOptions {
  /** ftruncate only: a sparse file without allocated blocks. Default false (fallocate). */
  sparse?: boolean;
}

export interface LockOptions {
  /** Block until the lock is granted (default true); false throws EAGAIN when busy. */
  wait?: boolean;
  /**
   * Wait at most this many milliseconds (0 .. 2^31-1), then throw MmapError
   * 'ERR_MMAP_LOCK_TIMEOUT'. Ignored with `wait: false`.
   */
  timeoutMs?: number;
}

/** An open file that mappings are made from. */
export class MappedFile {
  private backendFile: BackendFile | null;

  /** @internal Use openMappedFile(). */
  constructor(
    backendFile: BackendFile,
    readonly path: string,
    readonly mode: OpenMode,
    readonly backend: BackendName,
    private readonly maxMappingLength: number,
  ) {
    this.backendFile = backendFile;
  }

  get closed(): boolean {
    return this.backendFile === null;
  }

  private active(syscall: string): BackendFile {
    if (this.backendFile === null) {
      throw MmapError.fromErrno(nodeOs().constants.errno.EBADF, syscall, this.path);
    }
    return this.backendFile;
  }

  /** Current size in bytes (fstat). */
  size(): number {
    return this.active('fstat').size();
  }

  /**
   * Extends the file to newSize bytes and returns the new size; never shrinks. By default
   * the new tail gets real blocks (posix_fallocate), so ENOSPC/EFBIG is thrown here rather
   * than arriving later as a SIGBUS. `{ sparse: true }` only moves end-of-file.
   */
  grow(newSize: FileOffset, options?: GrowOptions): number {
    const file = this.active('posix_fallocate');
    const size = expectOffset(newSize, 'newSize');
    const { sparse } = expectObject(options, 'options');
    return file.grow(size, expectBoolean(sparse ?? false, 'options.sparse'));
  }

  /**
   * Sets the file's size to exactly newSize with ftruncate(2), shrinking it too, and returns
   * the new size (a file opened 'r' gets EINVAL, as from ftruncate). Shrinking under a mapping (this process's or another's) makes touching
   * the cut pages a SIGBUS: cut only a tail that nobody maps. To extend, prefer grow(),
   * which allocates real blocks.
   */
  truncate(newSize: FileOffset): number {
    const file = this.active('ftruncate');
    return file.truncate(expectOffset(newSize, 'newSize'));
  }

  /**
   * Maps [offset, offset + length) (length defaults to the rest of the file). The offset
   * need not be page-aligned. Mapping past end-of-file throws ERR_MMAP_PAST_EOF.
   */
  map(offset: FileOffset = 0, length?: FileOffset, options?: MapOptions): Mapping {
    const file = this.active('mmap');
    const start = expectOffset(offset, 'offset');
    const { writable } = expectObject(options, 'options');
    const isWritable = expectBoolean(writable ?? this.mode !== 'r', 'options.writable');
    let size: number;
    if (length === undefined) {
      // Default to the rest of the file; an empty rest maps one byte so the backend
      // reports it as past end-of-file.
      const rest = file.size() - Number(start);
      size = expectLength(Math.max(rest, 1), 'length', this.maxMappingLength);
    } else {
      size = expectLength(length, 'length', this.maxMappingLength);
    }
    const mapping = file.map(start, size, isWritable);
    return new Mapping(mapping, start, size, isWritable, this.backend, this.path);
  }

  /** fsync(2): file data and metadata to storage. */
  sync(): void {
    this.active('fsync').sync(false);
  }

  /** fdatasync(2): file data (and the size) to storage. */
  datasync(): void {
    this.active('fdatasync').sync(true);
  }

  /**
   * fdatasync(2) on libuv's thread pool: the JavaScript thread keeps running. The promise
   * rejects with an MmapError (EBADF once the file is closed). A close() meanwhile does not
   * disturb a sync already started.
   */
  datasyncAsync(): Promise<void> {
    try {
      return this.active('fdatasync').syncAsync(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * flock(2). Blocking by default (this blocks the JavaScript thread); with
   * `{ wait: false }` a busy lock throws MmapError code 'EAGAIN' (EWOULDBLOCK is the same
   * number on Linux and macOS, and Node names it EAGAIN).
   */
  lock(kind: LockKind = 'exclusive', options?: LockOptions): void {
    const file = this.active('flock');
    const checked = expectOneOf(kind, 'kind', LOCK_KINDS);
    const { wait, timeoutMs } = expectObject(options, 'options');
    const blocking = expectBoolean(wait ?? true, 'options.wait');
    const timeout =
      timeoutMs === undefined ? undefined : expectTimeout(timeoutMs, 'options.timeoutMs');
    if (!blocking || timeout === undefined) {
      file.lock(checked, blocking);
      return;
    }
    waitForLock(() => this.tryLock(checked), timeout, `a ${checked}`, this.path);
  }

  /** Non-blocking lock(): true when granted, false when another holder has it. */
  tryLock(kind: LockKind = 'exclusive'): boolean {
    try {
      this.lock(kind, { wait: false });
      return true;
    } catch (error) {
      if (error instanceof MmapError && error.code === 'EAGAIN') return false;
      throw error;
    }
  }

  unlock(): void {
    this.active('flock').lock('unlock', false);
  }

  /** fstat(2) of this descriptor: identity (dev, ino), size, mode, owner, mtime in ns. */
  stat(): FileStat {
    return this.active('fstat').stat();
  }

  /**
   * Reads `length` bytes at `position` (pread, retried until done) into a new array;
   * shorter only when the file ends first.
   */
  read(position: FileOffset, length: number): Uint8Array {
    const file = this.active('pread');
    const at = expectOffset(position, 'position');
    const size = expectLength(length, 'length', maxBufferLength(), 0);
    const target = new Uint8Array(size);
    const count = file.readInto(target, at);
    return count === size ? target : target.subarray(0, count);
  }

  /** Fills `target` from `position` (pread); returns the bytes read, fewer only at EOF. */
  readInto(target: Uint8Array, position: FileOffset): number {
    const file = this.active('pread');
    const checked = expectUint8Array(target, 'target');
    return file.readInto(checked, expectOffset(position, 'position'));
  }

  /** Writes all of `source` at `position` (pwrite, retried until done) or throws. */
  write(source: Uint8Array, position: FileOffset): void {
    const file = this.active('pwrite');
    const checked = expectUint8Array(source, 'source');
    file.write(checked, expectOffset(position, 'position'));
  }

  /**
   * write() of each part, in order, as one task on libuv's thread pool (one task per batch:
   * queuing one costs tens of microseconds). Returns at once with a handle whose `done`
   * says the task is over and whose `wait()` blocks until then (it needs no turn of the
   * event loop) and throws the first failed write's MmapError (ENOSPC, EIO, ...); the parts
   * after it are not written. No source may change until then; their buffers are kept
   * alive meanwhile. A close() of the file meanwhile does not disturb a task already
   * started. The heap backend writes at once.
   *
   * A part with `syncBefore` is written after an fdatasync, and `end` adds a last fdatasync
   * and the release of the caller's flock: a durable commit (data, then the record that
   * points at it) that completes on the thread pool even while this thread is busy. With
   * `releaseLock`, the lock is released even when this call throws. `startWriteback` starts
   * the parts' write-back to disk (Linux) so that such a later commit has less to wait for.
   */
  writeInBackground(parts: readonly WritePart[], end?: WriteEnd): BackgroundWrite {
    const { syncAfter, releaseLock, startWriteback } = expectObject(end, 'end');
    const release = expectBoolean(releaseLock ?? false, 'end.releaseLock');
    try {
      const file = this.active('pwrite');
      expectArray(parts, 'parts');
      const sources: Uint8Array[] = new Array(parts.length);
      const positions: FileOffset[] = new Array(parts.length);
      const syncBefore: boolean[] = new Array(parts.length);
      for (let i = 0; i < parts.length; i++) {
        const part = expectObject(parts[i], `parts[${i}]`);
        sources[i] = expectUint8Array(part['source'], `parts[${i}].source`);
        positions[i] = expectOffset(part['position'], `parts[${i}].position`);
        syncBefore[i] = expectBoolean(part['syncBefore'] ?? false, `parts[${i}].syncBefore`);
      }
      const after = expectBoolean(syncAfter ?? false, 'end.syncAfter');
      const writeback = expectBoolean(startWriteback ?? false, 'end.startWriteback');
      return file.writeInBackground(sources, positions, syncBefore, {
        startWriteback: writeback,
        syncAfter: after,
        releaseLock: release,
      });
    } catch (error) {
      if (release && this.backendFile !== null) this.backendFile.lock('unlock', false);
      throw error;
    }
  }

  /**
   * Closes the descriptor (and with it the flock). Mappings stay valid until their own
   * close(), as POSIX mappings outlive their descriptor. Idempotent.
   */
  close(): void {
    const file = this.backendFile;
    if (file === null) return;
    this.backendFile = null;
    file.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens (or creates, with mode 'w+' / 'wx+') a file for mapping. The open never blocks
 * (O_NONBLOCK, cleared afterwards) and only a regular file is accepted, checked on the
 * open descriptor: anything else is MmapError 'ERR_MMAP_NOT_REGULAR_FILE'.
 */
export function openMappedFile(path: string, options?: OpenMappedFileOptions): MappedFile {
  const checkedPath = expectPath(path, 'path');
  const { mode, backend, permissions, followSymlinks } = expectObject(options, 'options');
  const checkedMode = expectOneOf(mode ?? 'r', 'options.mode', OPEN_MODES);
  const perms = expectPermissions(permissions ?? 0o666, 'options.permissions');
  const follow = expectBoolean(followSymlinks ?? true, 'options.followSymlinks');
  const chosen = getBackend(backend as BackendChoice | undefined);
  const file = chosen.open(checkedPath, checkedMode, perms, { followSymlinks: follow });
  return new MappedFile(file, checkedPath, checkedMode, chosen.name, chosen.maxMappingLength);
}
