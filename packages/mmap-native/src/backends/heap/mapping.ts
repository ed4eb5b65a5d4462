// A heap "mapping": an ArrayBuffer holding a copy of the range. Writes reach the file on
// sync() and on unmap() (as dirty MAP_SHARED pages would), never for read-only mappings.

import type { Advice, BackendMapping, Residency, SyncMode } from '../../backend.js';
import { MmapError } from '../../errors.js';
import { nodeFs } from '../../node-builtins.js';
import { readFully, writeFully } from './io.js';

export interface HeapMappingOwner {
  readonly fd: number;
  readonly path: string;
  released(mapping: HeapMapping): void;
}

let live = 0;

/** Heap mappings of this thread not yet closed (they hold no kernel mapping). */
export function liveHeapMappings(): number {
  return live;
}

export class HeapMapping implements BackendMapping {
  readonly buffer: ArrayBuffer;
  readonly address = null;
  private open = true;

  constructor(
    private readonly owner: HeapMappingOwner,
    private readonly position: number,
    length: number,
    private readonly writable: boolean,
    private readonly pageSize: number,
  ) {
    this.buffer = new ArrayBuffer(length);
    try {
      readFully(owner.fd, new Uint8Array(this.buffer), position);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'read', owner.path);
    }
    live++;
  }

  private writeBack(offset: number, length: number): void {
    if (!this.writable || length === 0) return;
    try {
      writeFully(
        this.owner.fd,
        new Uint8Array(this.buffer, offset, length),
        this.position + offset,
      );
    } catch (error) {
      throw MmapError.fromNodeError(error, 'write', this.owner.path);
    }
  }

  private reload(offset: number, length: number): void {
    try {
      readFully(this.owner.fd, new Uint8Array(this.buffer, offset, length), this.position + offset);
    } catch (error) {
      throw MmapError.fromNodeError(error, 'read', this.owner.path);
    }
  }

  sync(offset: number, length: number, mode: SyncMode): void {
    // MS_INVALIDATE makes other writers' changes visible; a copy has to be re-read, which
    // replaces this copy's bytes of the range (write them back with 'sync' first).
    if (mode === 'invalidate') {
      this.reload(offset, length);
      return;
    }
    this.writeBack(offset, length);
    if (mode === 'sync' && this.writable) {
      try {
        nodeFs().fdatasyncSync(this.owner.fd); // MS_SYNC waits for the data to reach storage
      } catch (error) {
        throw MmapError.fromNodeError(error, 'fdatasync', this.owner.path);
      }
    }
  }

  advise(offset: number, length: number, advice: Advice): void {
    // MADV_DONTNEED on a private (read-only) mapping drops its copy-on-write pages, so the
    // range shows the file again; the heap copy does the same by re-reading it.
    if (advice === 'dontneed' && !this.writable) this.reload(offset, length);
  }

  residency(offset: number, length: number, pages: boolean): Residency {
    // Heap memory is always "resident"; page counting matches the posix backend.
    const first = Math.floor((this.position + offset) / this.pageSize);
    const end = this.position + offset + length;
    const total = length === 0 ? 0 : Math.ceil(end / this.pageSize) - first;
    return pages
      ? { resident: total, total, pages: new Uint8Array(total).fill(1) }
      : { resident: total, total };
  }

  unmap(): void {
    if (!this.open) return;
    this.open = false;
    live--;
    try {
      this.writeBack(0, this.buffer.byteLength);
    } finally {
      // Detach like the posix backend: every view sees byteLength 0 afterwards.
      structuredClone(this.buffer, { transfer: [this.buffer] });
      this.owner.released(this);
    }
  }
}
