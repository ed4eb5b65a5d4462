import { constants as osConstants } from 'node:os';
import {
  type BackendFile,
  type BackendName,
  LOCK_KINDS,
  type LockKind,
  OPEN_MODES,
  type OpenMode,
} from './backend.js';
import { MmapError } from './errors.js';
import { Mapping } from './mapping.js';
import { type BackendChoice, getBackend } from './select-backend.js';
import {
  expectBoolean,
  expectLength,
  expectObject,
  expectOffset,
  expectOneOf,
  expectPermissions,
  expectString,
  type FileOffset,
} from './validate.js';

export interface OpenMappedFileOptions {
  /** Default 'r'. See {@link OpenMode}. */
  mode?: OpenMode;
  /** Default: MEMLAYER_MMAP_BACKEND, else 'auto'. */
  backend?: BackendChoice;
  /** File mode bits for a created file (default 0o666, minus the umask). */
  permissions?: number;
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
      throw MmapError.fromErrno(osConstants.errno.EBADF, syscall, this.path);
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
   * flock(2). Blocking by default (this blocks the JavaScript thread); with
   * `{ wait: false }` a busy lock throws MmapError code 'EAGAIN' (EWOULDBLOCK is the same
   * number on Linux and macOS, and Node names it EAGAIN).
   */
  lock(kind: LockKind = 'exclusive', options?: LockOptions): void {
    const file = this.active('flock');
    const checked = expectOneOf(kind, 'kind', LOCK_KINDS);
    const { wait } = expectObject(options, 'options');
    file.lock(checked, expectBoolean(wait ?? true, 'options.wait'));
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

/** Opens (or creates, with mode 'w+' / 'wx+') a file for mapping. */
export function openMappedFile(path: string, options?: OpenMappedFileOptions): MappedFile {
  const checkedPath = expectString(path, 'path');
  const { mode, backend, permissions } = expectObject(options, 'options');
  const checkedMode = expectOneOf(mode ?? 'r', 'options.mode', OPEN_MODES);
  const perms = expectPermissions(permissions ?? 0o666, 'options.permissions');
  const chosen = getBackend(backend as BackendChoice | undefined);
  const file = chosen.open(checkedPath, checkedMode, perms);
  return new MappedFile(file, checkedPath, checkedMode, chosen.name, chosen.maxMappingLength);
}
