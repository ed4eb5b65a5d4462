import type {
  BackendFile,
  BackendMapping,
  BackgroundWrite,
  FileStat,
  LockKind,
  OpenMode,
  WriteEnd,
} from '../../backend.js';
import { MmapError } from '../../errors.js';
import { nodeFs, nodeOs } from '../../node-builtins.js';
import type { FileOffset } from '../../validate.js';
import type { NativeAddon } from '../posix/addon.js';
import { readAt, writeFully } from './io.js';
import { lockFile } from './locks.js';
import { HeapMapping, type HeapMappingOwner } from './mapping.js';

/**
 * open(2) flags of `mode`. 'w+' must not truncate (see OpenMode), so it is spelled with
 * numeric flags. Open never blocks (a FIFO would otherwise hang openSync): Linux and macOS
 * ignore O_NONBLOCK for regular files, the only kind accepted, so it is always set.
 */
function openFlags(mode: OpenMode, followSymlinks: boolean): number {
  const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NONBLOCK, O_NOFOLLOW } = nodeFs().constants;
  const access = {
    r: O_RDONLY,
    'r+': O_RDWR,
    'w+': O_RDWR | O_CREAT,
    'wx+': O_RDWR | O_CREAT | O_EXCL,
  }[mode];
  return access | O_NONBLOCK | (followSymlinks ? 0 : O_NOFOLLOW);
}

// Zero-filling in chunks bounds the memory a large grow needs.
const GROW_CHUNK_BYTES = 1 << 20;

export class HeapFile implements BackendFile, HeapMappingOwner {
  readonly fd: number;
  private readonly lockKey: string;
  private closed = false;
  // The descriptor stays open while mappings need it for write-back, as POSIX mappings
  // outlive the descriptor they came from.
  private readonly mappings = new Set<HeapMapping>();
  // Background syncs still using the descriptor: it is closed after the last one.
  private pendingSyncs = 0;

  constructor(
    readonly path: string,
    private readonly mode: OpenMode,
    permissions: number,
    private readonly pageSize: number,
    private readonly addon: NativeAddon | null,
    followSymlinks: boolean,
  ) {
    const flags = openFlags(mode, followSymlinks);
    let fd: number;
    try {
      fd = nodeFs().openSync(path, flags, permissions);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'open', path);
    }
    try {
      // Checked on the open descriptor: no window between a check and the open.
      const st = nodeFs().fstatSync(fd);
      if (!st.isFile()) {
        throw new MmapError(`only regular files can be mapped: '${path}' is not one`, {
          code: 'ERR_MMAP_NOT_REGULAR_FILE',
          syscall: 'open',
          path,
        });
      }
      // The process-local lock table keys on the file's identity, like flock does.
      this.lockKey = `${st.dev}:${st.ino}`;
    } catch (error) {
      nodeFs().closeSync(fd);
      throw MmapError.fromNodeError(error, 'fstat', path);
    }
    this.fd = fd;
  }

  private check(syscall: string): void {
    if (this.closed) throw MmapError.fromErrno(nodeOs().constants.errno.EBADF, syscall, this.path);
  }

  size(): number {
    this.check('fstat');
    try {
      return nodeFs().fstatSync(this.fd).size;
    } catch (error) {
      throw MmapError.fromNodeError(error, 'fstat', this.path);
    }
  }

  grow(newSize: FileOffset, sparse: boolean): number {
    this.check(sparse ? 'ftruncate' : 'write');
    const target = Number(newSize);
    if (!Number.isSafeInteger(target)) {
      throw MmapError.fromErrno(nodeOs().constants.errno.EFBIG, 'ftruncate', this.path);
    }
    const current = this.size();
    if (target <= current) return current;
    if (sparse) {
      try {
        nodeFs().ftruncateSync(this.fd, target);
      } catch (error) {
        throw MmapError.fromNodeError(error, 'ftruncate', this.path);
      }
      return this.size();
    }
    // The fallocate equivalent: write real zeros so ENOSPC/EFBIG show up now; on failure
    // the file goes back to its old size.
    const zeros = new Uint8Array(Math.min(GROW_CHUNK_BYTES, target - current));
    try {
      for (let at = current; at < target; at += zeros.length) {
        writeFully(this.fd, zeros.subarray(0, Math.min(zeros.length, target - at)), at);
      }
    } catch (error) {
      try {
        nodeFs().ftruncateSync(this.fd, current);
      } catch {
        // keep the original error
      }
      throw MmapError.fromNodeError(error, 'write', this.path);
    }
    return this.size();
  }

  truncate(newSize: FileOffset): number {
    this.check('ftruncate');
    const target = Number(newSize);
    if (!Number.isSafeInteger(target)) {
      throw MmapError.fromErrno(nodeOs().constants.errno.EFBIG, 'ftruncate', this.path);
    }
    try {
      nodeFs().ftruncateSync(this.fd, target);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'ftruncate', this.path);
    }
    return this.size();
  }

  map(offset: FileOffset, length: number, writable: boolean): BackendMapping {
    this.check('mmap');
    const size = this.size();
    const start = Number(offset);
    if (start > size || length > size - start) {
      throw new MmapError(
        `cannot map bytes [${offset}, ${BigInt(offset) + BigInt(length)}) of a file of ${size} bytes: grow the file first`,
        { code: 'ERR_MMAP_PAST_EOF', syscall: 'mmap', path: this.path },
      );
    }
    if (writable && this.mode === 'r') {
      // What mmap(MAP_SHARED, PROT_WRITE) says for a descriptor opened read-only.
      throw MmapError.fromErrno(nodeOs().constants.errno.EACCES, 'mmap', this.path);
    }
    const mapping = new HeapMapping(this, start, length, writable, this.pageSize);
    this.mappings.add(mapping);
    return mapping;
  }

  released(mapping: HeapMapping): void {
    this.mappings.delete(mapping);
    this.closeDescriptorIfUnused();
  }

  sync(dataOnly: boolean): void {
    const syscall = dataOnly ? 'fdatasync' : 'fsync';
    this.check(syscall);
    try {
      if (dataOnly) nodeFs().fdatasyncSync(this.fd);
      else nodeFs().fsyncSync(this.fd);
    } catch (error) {
      throw MmapError.fromNodeError(error, syscall, this.path);
    }
  }

  syncAsync(dataOnly: boolean): Promise<void> {
    const syscall = dataOnly ? 'fdatasync' : 'fsync';
    this.check(syscall);
    this.pendingSyncs++;
    return new Promise<void>((resolve, reject) => {
      (dataOnly ? nodeFs().fdatasync : nodeFs().fsync)(this.fd, (error) => {
        this.pendingSyncs--;
        try {
          this.closeDescriptorIfUnused();
        } catch {
          // the sync's own outcome is what the caller asked for
        }
        if (error) reject(MmapError.fromNodeError(error, syscall, this.path));
        else resolve();
      });
    });
  }

  lock(kind: LockKind | 'unlock', wait: boolean): void {
    this.check('flock');
    lockFile(this.addon, this.fd, this.lockKey, this.path, kind, wait);
  }

  stat(): FileStat {
    this.check('fstat');
    try {
      const st = nodeFs().fstatSync(this.fd, { bigint: true });
      return {
        dev: Number(st.dev),
        ino: Number(st.ino),
        size: Number(st.size),
        mode: Number(st.mode),
        uid: Number(st.uid),
        gid: Number(st.gid),
        mtimeNs: st.mtimeNs,
      };
    } catch (error) {
      throw MmapError.fromNodeError(error, 'fstat', this.path);
    }
  }

  // node:fs takes numeric positions only up to 2^53-1 (writeSync ignores a bigint).
  private position(position: FileOffset, syscall: string): number {
    const at = Number(position);
    if (!Number.isSafeInteger(at)) {
      throw MmapError.fromErrno(nodeOs().constants.errno.EFBIG, syscall, this.path);
    }
    return at;
  }

  readInto(target: Uint8Array, position: FileOffset): number {
    this.check('pread');
    const at = this.position(position, 'pread');
    try {
      return readAt(this.fd, target, at);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'pread', this.path);
    }
  }

  write(source: Uint8Array, position: FileOffset): void {
    if (this.mode === 'r') {
      // What pwrite says for a descriptor opened read-only.
      throw MmapError.fromErrno(nodeOs().constants.errno.EBADF, 'pwrite', this.path);
    }
    this.check('pwrite');
    const at = this.position(position, 'pwrite');
    try {
      writeFully(this.fd, source, at);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'pwrite', this.path);
    }
  }

  /**
   * The heap backend has no thread of its own: the bytes are written now, and the outcome
   * is reported by wait() as the posix backend's would be.
   */
  writeInBackground(
    sources: readonly Uint8Array[],
    positions: readonly FileOffset[],
    syncBefore: readonly boolean[],
    end: Required<WriteEnd>,
  ): BackgroundWrite {
    this.check('pwrite');
    try {
      for (let i = 0; i < sources.length; i++) {
        if (syncBefore[i] === true) this.sync(true);
        this.write(sources[i] as Uint8Array, positions[i] as FileOffset);
      }
      if (end.syncAfter) this.sync(true);
      return WRITTEN;
    } catch (error) {
      return failedWrite(error);
    } finally {
      if (end.releaseLock) this.lock('unlock', false);
    }
  }

  close(): void {
    if (this.closed) return;
    // Closing the descriptor drops its flock; do the same for process-local locks.
    lockFile(this.addon, this.fd, this.lockKey, this.path, 'unlock', false);
    this.closed = true;
    this.closeDescriptorIfUnused();
  }

  private closeDescriptorIfUnused(): void {
    if (!this.closed || this.mappings.size > 0 || this.pendingSyncs > 0) return;
    try {
      nodeFs().closeSync(this.fd);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'close', this.path);
    }
  }
}

const WRITTEN: BackgroundWrite = Object.freeze({ done: true, wait(): void {} });

function failedWrite(error: unknown): BackgroundWrite {
  return Object.freeze({
    done: true,
    wait(): never {
      throw error;
    },
  });
}
