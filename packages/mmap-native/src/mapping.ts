import {
  ADVICES,
  type Advice,
  type BackendMapping,
  type BackendName,
  type Residency,
  SYNC_MODES,
  type SyncMode,
} from './backend.js';
import { MmapError } from './errors.js';
import {
  expectBoolean,
  expectLength,
  expectObject,
  expectOneOf,
  type FileOffset,
} from './validate.js';

export interface ResidencyOptions {
  /** Start inside the mapping (default 0). */
  offset?: number;
  /** Bytes from offset (default: to the end of the mapping). */
  length?: number;
  /** Also return one byte per page (1 = resident). Default false. */
  pages?: boolean;
}

/**
 * A mapped range of a file. `buffer` is the memory itself (an external ArrayBuffer on the
 * posix backend). close() unmaps it and detaches `buffer`: every view of it then has
 * byteLength 0 instead of pointing at unmapped memory.
 */
export class Mapping {
  private backendMapping: BackendMapping | null;
  /** The mapped memory; detached (byteLength 0) after close(). */
  readonly buffer: ArrayBuffer;
  /**
   * Page-aligned start address of the kernel mapping (posix), matching the start of its
   * line in /proc/self/maps; null on the heap backend. `buffer` begins
   * `offset % pageSize()` bytes after it.
   */
  readonly address: bigint | null;

  /** @internal Created by MappedFile.map(). */
  constructor(
    backendMapping: BackendMapping,
    /** File offset of buffer[0], as given to map(). */
    readonly offset: FileOffset,
    /** Length in bytes. */
    readonly length: number,
    /** false: a private copy-on-write mapping whose writes never reach the file. */
    readonly writable: boolean,
    readonly backend: BackendName,
    readonly path: string,
  ) {
    this.backendMapping = backendMapping;
    this.buffer = backendMapping.buffer;
    this.address = backendMapping.address;
  }

  get closed(): boolean {
    return this.backendMapping === null;
  }

  /** A Uint8Array over the whole mapping (length 0 once closed). */
  bytes(): Uint8Array {
    // A detached ArrayBuffer cannot be wrapped; an empty view says the same thing.
    return this.buffer.byteLength === 0 ? new Uint8Array(0) : new Uint8Array(this.buffer);
  }

  private active(syscall: string): BackendMapping {
    if (this.backendMapping === null) {
      throw new MmapError('the mapping is closed', {
        code: 'ERR_MMAP_CLOSED',
        syscall,
        path: this.path,
      });
    }
    return this.backendMapping;
  }

  private range(offset: unknown, length: unknown): [number, number] {
    const start = expectLength(offset ?? 0, 'offset', this.length, 0);
    const size = expectLength(length ?? this.length - start, 'length', this.length - start, 0);
    return [start, size];
  }

  /**
   * msync(2) of [offset, offset + length) of this mapping, start rounded down to a page.
   * 'sync' waits for the data to be written, 'async' schedules it, 'invalidate' asks for
   * other mappings' cached copies to be refreshed. A no-op for read-only mappings.
   */
  sync(offset?: number, length?: number, mode: SyncMode = 'sync'): void {
    const backend = this.active('msync');
    const [start, size] = this.range(offset, length);
    backend.sync(start, size, expectOneOf(mode, 'mode', SYNC_MODES));
  }

  /** madvise(2) over [offset, offset + length) (default: the whole mapping). */
  advise(advice: Advice, offset?: number, length?: number): void {
    const backend = this.active('madvise');
    const checked = expectOneOf(advice, 'advice', ADVICES);
    const [start, size] = this.range(offset, length);
    backend.advise(start, size, checked);
  }

  /** mincore(2): how many pages of the range are resident in memory. */
  residency(options?: ResidencyOptions): Residency {
    const backend = this.active('mincore');
    const { offset, length, pages } = expectObject(options, 'options');
    const [start, size] = this.range(offset, length);
    return backend.residency(start, size, expectBoolean(pages ?? false, 'pages'));
  }

  /** munmap(2) and detach `buffer`. Idempotent: a second call does nothing. */
  close(): void {
    const backend = this.backendMapping;
    if (backend === null) return;
    this.backendMapping = null;
    backend.unmap();
  }

  /** Alias of close(). */
  unmap(): void {
    this.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
