import { prefault } from '@memlayer/mmap-native';
import { PACKED_ALLOCATION_ALIGNMENT, roundUp } from '../alignment.js';
import { assertNonNegativeInteger } from '../errors.js';
import type {
  FallbackReason,
  OpenContext,
  PackedRegion,
  PackedStorage,
  ReserveOptions,
  StorageStats,
  StoredEntry,
} from './packed-storage.js';

export interface HeapStorageOptions {
  /** Upper bound on heap bytes held at once; reserve returns null beyond it. */
  readonly maxBytes?: number;
  /**
   * Count every reservation in `stats().fallback` under this reason (e.g. 'no-path' for a
   * cache created without a file). Default: not counted.
   */
  readonly fallbackReason?: FallbackReason;
}

/** One ArrayBuffer that small regions are carved from, in order, and never reused. */
interface Slab {
  readonly buffer: ArrayBuffer;
  cursor: number;
}

/**
 * First slab; each later one doubles up to the maximum, so a small model allocates little
 * and a large one few buffers.
 */
const FIRST_SLAB_BYTES = 64 << 10;
const MAX_SLAB_BYTES = 4 << 20;
/** Regions above this get an ArrayBuffer of their own: they would waste a slab's tail. */
const MAX_CARVED_BYTES = 256 << 10;

/**
 * Packed bytes on the JS heap. One ArrayBuffer per region costs more than packing a small
 * layer (a backing store, its accounting, an external-memory GC hint each), so regions up
 * to 256 KiB are carved from shared slabs at 64-byte aligned offsets; larger ones get a
 * buffer of their own. Every region is released on its own (its bytes count no more). Fresh
 * ArrayBuffer bytes are zero and slab bytes are never handed out twice, so every region is
 * `zeroed`. Each fresh buffer of 1 MiB or more has its pages faulted in on a thread-pool
 * thread while packing fills it from the front (mmap-native `prefault`): a fresh page costs
 * a fault on its first write, which on a virtual machine costs more than packing its bytes.
 * A slab is held only by the views of its regions (and while it is the one carved from):
 * the GC frees it when the last of them is released and dropped. Nothing is ever persisted.
 */
export class HeapStorage implements PackedStorage {
  readonly #maxBytes: number;
  readonly #live = new Set<PackedRegion>();
  readonly #fallbackReason: FallbackReason | undefined;
  #slab: Slab | null = null;
  #nextSlabBytes = FIRST_SLAB_BYTES;
  #heapBytes = 0;
  #countedRegions = 0;
  #countedBytes = 0;

  constructor(options: HeapStorageOptions = {}) {
    const maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    assertNonNegativeInteger(maxBytes, 'options.maxBytes');
    this.#maxBytes = maxBytes;
    this.#fallbackReason = options.fallbackReason;
  }

  open(_context: OpenContext): readonly StoredEntry[] {
    return [];
  }

  reserve(n: number, _options: ReserveOptions): PackedRegion | null {
    assertNonNegativeInteger(n, 'n');
    const reservedBytes = roundUp(Math.max(n, 1), PACKED_ALLOCATION_ALIGNMENT);
    if (this.#heapBytes + reservedBytes > this.#maxBytes) return null;
    let region: PackedRegion;
    try {
      if (reservedBytes <= MAX_CARVED_BYTES) {
        const slab = this.#slabWithRoom(reservedBytes);
        region = {
          bytes: new Uint8Array(slab.buffer, slab.cursor, n),
          reservedBytes,
          zeroed: true,
        };
        slab.cursor += reservedBytes;
      } else {
        const buffer = freshBuffer(reservedBytes);
        region = {
          bytes: new Uint8Array(buffer, 0, n),
          reservedBytes,
          zeroed: true,
        };
      }
    } catch (error) {
      // Allocation failure is a null reservation (the provider contract), not a throw.
      if (error instanceof RangeError) return null;
      throw error;
    }
    this.#live.add(region);
    this.#heapBytes += reservedBytes;
    this.#countedRegions++;
    this.#countedBytes += reservedBytes;
    return region;
  }

  release(region: PackedRegion): void {
    if (this.#live.delete(region)) this.#heapBytes -= region.reservedBytes;
  }

  /** Whether `region` was reserved here and not yet released. */
  owns(region: PackedRegion): boolean {
    return this.#live.has(region);
  }

  sync(): void {}

  persist(_entries: readonly StoredEntry[]): readonly string[] {
    return [];
  }

  close(): void {
    this.#live.clear();
    this.#slab = null;
    this.#nextSlabBytes = FIRST_SLAB_BYTES;
    this.#heapBytes = 0;
  }

  stats(): StorageStats {
    const stats = { heapBytes: this.#heapBytes, fileBytes: 0, orphanBytes: 0, mappedBytes: 0 };
    const reason = this.#fallbackReason;
    if (reason === undefined) return stats;
    return {
      ...stats,
      fallback: { [reason]: { count: this.#countedRegions, bytes: this.#countedBytes } },
    };
  }

  /** The current slab, or a fresh one when it cannot hold `bytes` more. */
  #slabWithRoom(bytes: number): Slab {
    const current = this.#slab;
    if (current !== null && current.buffer.byteLength - current.cursor >= bytes) return current;
    // The old slab's tail (< the region asked for) is left unused.
    let size = this.#nextSlabBytes;
    while (size < bytes) size *= 2;
    const slab: Slab = { buffer: freshBuffer(size), cursor: 0 };
    this.#nextSlabBytes = Math.min(size * 2, MAX_SLAB_BYTES);
    this.#slab = slab;
    return slab;
  }
}

/**
 * Buffers from this size on are prefaulted. Queuing the work costs tens of microseconds:
 * more than the faults of a small slab, less than the 256 faults of 1 MiB.
 */
const PREFAULT_MIN_BYTES = 1 << 20;

/** A zeroed ArrayBuffer; a large one's pages start being faulted in on another thread. */
function freshBuffer(bytes: number): ArrayBuffer {
  const buffer = new ArrayBuffer(bytes);
  // Advice only: its promise never rejects, and the buffer is usable at once.
  if (bytes >= PREFAULT_MIN_BYTES) void prefault(buffer);
  return buffer;
}
