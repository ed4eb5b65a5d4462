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

/**
 * Packed bytes on the JS heap: one ArrayBuffer per region, so each region starts at
 * byteOffset 0 (aligned) and is freed independently. Nothing is ever persisted.
 */
export class HeapStorage implements PackedStorage {
  readonly #maxBytes: number;
  readonly #live = new Set<PackedRegion>();
  readonly #fallbackReason: FallbackReason | undefined;
  #heapBytes = 0;
  #counted = { count: 0, bytes: 0 };

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
    let buffer: ArrayBuffer;
    try {
      buffer = new ArrayBuffer(reservedBytes);
    } catch (error) {
      // Allocation failure is a null reservation (the provider contract), not a throw.
      if (error instanceof RangeError) return null;
      throw error;
    }
    const region: PackedRegion = { bytes: new Uint8Array(buffer, 0, n), reservedBytes };
    this.#live.add(region);
    this.#heapBytes += reservedBytes;
    this.#counted = { count: this.#counted.count + 1, bytes: this.#counted.bytes + reservedBytes };
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
    this.#heapBytes = 0;
  }

  stats(): StorageStats {
    const stats = { heapBytes: this.#heapBytes, fileBytes: 0, orphanBytes: 0, mappedBytes: 0 };
    const reason = this.#fallbackReason;
    return reason === undefined ? stats : { ...stats, fallback: { [reason]: this.#counted } };
  }
}
