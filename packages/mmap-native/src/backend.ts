// The small interface both backends implement. The public MappedFile / Mapping classes
// validate arguments and track state; a backend only does the work.
import type { FileOffset } from './validate.js';

/** 'r': read-only; 'r+': read-write; 'w+': read-write, created when missing (never
 * truncated: truncating a file someone has mapped is a SIGBUS for them); 'wx+': like 'w+'
 * but fails with EEXIST when the file exists. */
export type OpenMode = 'r' | 'r+' | 'w+' | 'wx+';
export const OPEN_MODES: readonly OpenMode[] = ['r', 'r+', 'w+', 'wx+'];

export type LockKind = 'shared' | 'exclusive';
export const LOCK_KINDS: readonly LockKind[] = ['shared', 'exclusive'];

/** msync flavours: MS_SYNC, MS_ASYNC, MS_INVALIDATE. */
export type SyncMode = 'sync' | 'async' | 'invalidate';
export const SYNC_MODES: readonly SyncMode[] = ['sync', 'async', 'invalidate'];

/** madvise advice: MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM, MADV_WILLNEED, MADV_DONTNEED. */
export type Advice = 'normal' | 'sequential' | 'random' | 'willneed' | 'dontneed';
export const ADVICES: readonly Advice[] = [
  'normal',
  'sequential',
  'random',
  'willneed',
  'dontneed',
];

export type BackendName = 'posix' | 'heap';

/** Result of mincore over a range: resident page count, page count, optional per-page map. */
export interface Residency {
  resident: number;
  total: number;
  /** One byte per page, 1 when resident (only when asked for). */
  pages?: Uint8Array;
}

/** fstat(2) of an open descriptor. */
export interface FileStat {
  dev: number;
  ino: number;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  /** Modification time in nanoseconds since the epoch. */
  mtimeNs: bigint;
}

export interface BackendOpenOptions {
  /** false: O_NOFOLLOW, a symlink as the final component fails with ELOOP. Default true. */
  followSymlinks?: boolean;
}

export interface Backend {
  readonly name: BackendName;
  /** Largest length of one mapping: the largest ArrayBuffer this runtime can expose. */
  readonly maxMappingLength: number;
  pageSize(): number;
  /** Opens without blocking and accepts only regular files (ERR_MMAP_NOT_REGULAR_FILE). */
  open(
    path: string,
    mode: OpenMode,
    permissions: number,
    options?: BackendOpenOptions,
  ): BackendFile;
  /** Mappings of this backend not yet unmapped (posix: in the whole process). */
  liveMappings(): number;
}

export interface BackendFile {
  size(): number;
  /** Extends to newSize (never shrinks) and returns the resulting size. */
  grow(newSize: FileOffset, sparse: boolean): number;
  /** ftruncate to exactly newSize (grows or shrinks); returns the resulting size. */
  truncate(newSize: FileOffset): number;
  map(offset: FileOffset, length: number, writable: boolean): BackendMapping;
  sync(dataOnly: boolean): void;
  /** sync() on a worker thread; the promise settles when it is done. */
  syncAsync(dataOnly: boolean): Promise<void>;
  lock(kind: LockKind | 'unlock', wait: boolean): void;
  stat(): FileStat;
  /** pread until target is full or end of file; returns the bytes read. */
  readInto(target: Uint8Array, position: FileOffset): number;
  /** pwrite of all of source, or an error. */
  write(source: Uint8Array, position: FileOffset): void;
  /**
   * One worker-thread task writing sources[i] at positions[i] in order (an fdatasync first
   * where syncBefore[i]), stopping at the first error, then `end`; no source may change
   * until it is done.
   */
  writeInBackground(
    sources: readonly Uint8Array[],
    positions: readonly FileOffset[],
    syncBefore: readonly boolean[],
    end: Required<WriteEnd>,
  ): BackgroundWrite;
  close(): void;
}

/** Bytes to write at a file position (MappedFile.writeInBackground). */
export interface WritePart {
  readonly source: Uint8Array;
  readonly position: FileOffset;
  /** fdatasync before this part: every byte written before reaches the disk first. */
  readonly syncBefore?: boolean;
}

/** What a background write does once its parts are written (MappedFile.writeInBackground). */
export interface WriteEnd {
  /**
   * Start writing the parts back to disk without waiting for it (Linux
   * sync_file_range SYNC_FILE_RANGE_WRITE), so a later fdatasync has less left to do.
   * Advice: elsewhere, on the heap backend and on any error, nothing is done.
   */
  readonly startWriteback?: boolean;
  /** fdatasync after the last part (skipped when a part failed). */
  readonly syncAfter?: boolean;
  /**
   * Release the flock the caller holds on this file when the task is over, failed or not:
   * a commit stays under the lock until its last sync, with no JavaScript callback.
   */
  readonly releaseLock?: boolean;
}

/** Writes running off the JavaScript thread (MappedFile.writeInBackground). */
export interface BackgroundWrite {
  /** Every byte is written, or the write failed; never blocks. */
  readonly done: boolean;
  /**
   * Blocks until the write is over (no turn of the event loop needed), then throws its
   * MmapError if it failed; it throws that error again at every call.
   */
  wait(): void;
}

export interface BackendMapping {
  readonly buffer: ArrayBuffer;
  /** Start address of the kernel mapping (page-aligned), null when there is none. */
  readonly address: bigint | null;
  /** Offsets are relative to the start of `buffer`. */
  sync(offset: number, length: number, mode: SyncMode): void;
  advise(offset: number, length: number, advice: Advice): void;
  residency(offset: number, length: number, pages: boolean): Residency;
  unmap(): void;
}
