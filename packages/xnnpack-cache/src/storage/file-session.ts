import { alignUp } from '@memlayer/cache-format';
import type { BackgroundWrite, LockKind } from '@memlayer/mmap-native';
import { removeDeadTemps } from './atomic-replace.js';
import { CacheFile } from './cache-file.js';
import { reasonOf, StorageFallback } from './fallback.js';
import { applyFilePolicy } from './file-policy.js';
import type { ResolvedFileStorageOptions } from './file-storage-options.js';
import {
  type CacheFormat,
  type CommittedIndex,
  dataStartOf,
  NO_ENTRY_COLUMNS,
} from './index-io.js';
import type { UnusedTail } from './region-allocator.js';

const REPLACED_FILE_RETRIES = 8;

/** A stretch appended at the end of the current file. */
export interface Grown {
  readonly file: CacheFile;
  readonly fileOffset: number;
  readonly size: number;
}

/**
 * The file behind a FileStorage: opens the path under its policy, follows it when
 * compaction or a rebuild renames another file over it (older files stay open while their
 * mappings are in use), runs critical sections under a bounded flock, and grows the file.
 */
export class CacheFileSession {
  readonly #options: ResolvedFileStorageOptions;
  readonly #pageSize: number;
  readonly #onRetire: () => void;
  #file: CacheFile | null = null;
  #format: CacheFormat = 3;
  /** Format of the next fresh file after a rebuild (a v1 file becomes v2). */
  #rebuildFormat: CacheFormat | null = null;
  #retired: CacheFile[] = [];
  #tempsCleaned = false;
  /** The newest committed index this process knows of the current file. */
  committed: CommittedIndex | null = null;
  rebuiltBecause: string | null = null;
  /** The file's entries are served but nothing may be appended ('foreign-format'). */
  appendRefused = false;

  constructor(options: ResolvedFileStorageOptions, pageSize: number, onRetire: () => void) {
    this.#options = options;
    this.#pageSize = pageSize;
    this.#onRetire = onRetire;
  }

  /** The open file (null before the first critical section or after close). */
  get file(): CacheFile | null {
    return this.#file;
  }

  get format(): CacheFormat {
    return this.#format;
  }

  /**
   * Runs `fn` under the file lock (waiting at most `timeoutMs`, by default the options'),
   * first moving to a replacement file if there is one. `fn` may hand the lock over to a
   * background task (CacheFile.withLock).
   */
  locked<T>(
    kind: LockKind,
    fn: (file: CacheFile, handOver: (task: BackgroundWrite) => void) => T,
    timeoutMs = this.#options.lockTimeoutMs,
  ): T {
    for (let attempt = 0; attempt < REPLACED_FILE_RETRIES; attempt++) {
      const file = this.current();
      const result = file.withLock(kind, timeoutMs, (handOver) => {
        if (file.isReplaced() || !this.#ready(file)) return null;
        return { value: fn(file, handOver) };
      });
      if (result !== null) return result.value;
      if (this.#file === file) this.#retire(file);
    }
    throw new Error(
      `${this.#options.path} kept being replaced while this process tried to lock it`,
    );
  }

  current(): CacheFile {
    if (this.#file === null) {
      if (!this.#tempsCleaned) {
        this.#tempsCleaned = true;
        removeDeadTemps(this.#options.path);
      }
      const { backend, followSymlinks, fileMode } = this.#options;
      this.#file = CacheFile.open(this.#options.path, { backend, followSymlinks, fileMode });
      this.committed = null;
    }
    return this.#file;
  }

  /**
   * Appends `bytes` (at least `minimum`) fresh page-aligned bytes at the end of the file
   * under the exclusive lock; real blocks, so a full disk fails here and not as a SIGBUS.
   * The file never grows past `maxEnd` (the disk budget): fewer bytes when `minimum` still
   * fits, else StorageFallback 'over-budget'. Checked under the lock against the file's
   * real size, so processes sharing the file keep to the budget together.
   */
  grow(
    bytes: number,
    minimum: number,
    tail: UnusedTail | null = null,
    maxEnd = Number.POSITIVE_INFINITY,
  ): Grown {
    return this.locked('exclusive', (file) => {
      const size = file.size();
      const end = Math.max(size, dataStartOf(this.#format));
      // Our own unused tail at the end of the file is reused rather than left as orphans.
      const reuse = tail !== null && tail.file === file && tail.end === size;
      const fileOffset = alignUp(reuse ? tail.from : end, this.#pageSize);
      const room = maxEnd - fileOffset;
      if (room < minimum) {
        throw new StorageFallback('over-budget', `${file.path} is at its disk budget`);
      }
      // mmap-native's heap backend writes a whole mapping back on sync: no spare tail there.
      const spare = file.mapped.backend === 'posix' ? bytes : minimum;
      const budgeted = Number.isFinite(room) ? room - (room % this.#pageSize) : spare;
      const wanted = Math.max(minimum, Math.min(spare, budgeted));
      try {
        file.mapped.grow(fileOffset + wanted);
        return { file, fileOffset, size: wanted };
      } catch (error) {
        // A batch the disk cannot hold may still leave room for this one region.
        if (wanted === minimum || reasonOf(error, 'io') !== 'enospc') throw error;
        file.mapped.grow(fileOffset + minimum);
        return { file, fileOffset, size: minimum };
      }
    });
  }

  /** Closes the current and retired files; returns the size the current one had. */
  close(): number {
    for (const file of this.#retired) file.close();
    this.#retired = [];
    const file = this.#file;
    this.#file = null;
    this.committed = null;
    if (file === null) return 0;
    const size = file.size();
    file.close();
    return size;
  }

  /**
   * Reads the committed index of a newly opened file (under its lock) and applies the
   * file policy. False when the file was rebuilt: the caller retries on the fresh file.
   */
  #ready(file: CacheFile): boolean {
    if (this.committed !== null) return true;
    const format = this.#rebuildFormat ?? this.#options.format;
    const { identity, fileMode } = this.#options;
    const opened = applyFilePolicy(file, { format, identity, fileMode, pageSize: this.#pageSize });
    if (opened.kind === 'rebuilt') {
      this.rebuiltBecause = opened.because;
      this.#rebuildFormat = opened.format;
      return false;
    }
    this.#format = opened.format;
    this.committed = opened.index ?? emptyIndex(opened.format);
    this.appendRefused = opened.appendRefused;
    return true;
  }

  #retire(file: CacheFile): void {
    this.#retired.push(file);
    this.#onRetire();
    this.#file = null;
    this.committed = null;
  }
}

function emptyIndex(version: CacheFormat): CommittedIndex {
  return {
    version,
    entries: [],
    columns: NO_ENTRY_COLUMNS,
    indexStart: 0,
    trailerLength: 0,
    generation: 0,
  };
}
