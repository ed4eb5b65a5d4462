import { alignUp, CALLABLE_ALIGN } from './constants.js';
import { DeviceRunnerError, invalidArgument } from './errors.js';

export type FitStrategy = 'first-fit' | 'best-fit';

export interface DeviceAllocatorOptions {
  /** Arena size in bytes (rounded down to the alignment). */
  readonly capacity: number;
  /** Address of arena offset 0; non-zero so that 0 is never a valid device pointer. */
  readonly baseAddress?: number;
  readonly strategy?: FitStrategy;
}

interface Block {
  offset: number;
  size: number;
}

export interface Allocation {
  readonly address: number;
  /** Bytes reserved: the request rounded up to 64. */
  readonly size: number;
  readonly requested: number;
}

/** Default base: above 4 GiB so every device pointer needs the full u64 patch. */
export const DEFAULT_DEVICE_BASE_ADDRESS = 0x1_0000_0000;

/**
 * Fixed-capacity arena allocator for simulated device global memory: 64-byte-aligned
 * blocks, a free list sorted by offset, coalescing on free, first-fit or best-fit.
 * committedBytes counts reserved (rounded) bytes, so capacity = committed + free.
 */
export class DeviceAllocator {
  readonly capacity: number;
  readonly baseAddress: number;
  readonly strategy: FitStrategy;
  private freeList: Block[];
  /** Live allocations, sorted by offset (for containment lookups). */
  private live: Allocation[] = [];
  private committed = 0;
  private peak = 0;

  constructor(options: DeviceAllocatorOptions) {
    const { capacity, baseAddress = DEFAULT_DEVICE_BASE_ADDRESS, strategy = 'first-fit' } = options;
    if (!Number.isSafeInteger(capacity) || capacity < CALLABLE_ALIGN) {
      invalidArgument(`an integer >= ${CALLABLE_ALIGN}`, 'capacity', capacity);
    }
    if (
      !Number.isSafeInteger(baseAddress) ||
      baseAddress <= 0 ||
      baseAddress % CALLABLE_ALIGN !== 0 ||
      !Number.isSafeInteger(baseAddress + capacity)
    ) {
      invalidArgument('a positive 64-byte-aligned safe integer', 'baseAddress', baseAddress);
    }
    if (strategy !== 'first-fit' && strategy !== 'best-fit') {
      invalidArgument("'first-fit' or 'best-fit'", 'strategy', strategy);
    }
    this.capacity = Math.floor(capacity / CALLABLE_ALIGN) * CALLABLE_ALIGN;
    this.baseAddress = baseAddress;
    this.strategy = strategy;
    this.freeList = [{ offset: 0, size: this.capacity }];
  }

  get committedBytes(): number {
    return this.committed;
  }

  get peakBytes(): number {
    return this.peak;
  }

  get liveCount(): number {
    return this.live.length;
  }

  get totalFreeBytes(): number {
    let total = 0;
    for (const block of this.freeList) total += block.size;
    return total;
  }

  get largestFreeBlock(): number {
    let largest = 0;
    for (const block of this.freeList) largest = Math.max(largest, block.size);
    return largest;
  }

  get freeBlockCount(): number {
    return this.freeList.length;
  }

  /** 1 - largestFree / totalFree: 0 when free space is one block, near 1 when shattered. */
  get fragmentation(): number {
    const total = this.totalFreeBytes;
    return total === 0 ? 0 : 1 - this.largestFreeBlock / total;
  }

  allocations(): readonly Allocation[] {
    return this.live;
  }

  alloc(requested: number): Allocation {
    if (!Number.isSafeInteger(requested) || requested <= 0) {
      invalidArgument('a positive integer', 'allocation size', requested);
    }
    const size = alignUp(requested, CALLABLE_ALIGN);
    let chosen = -1;
    for (let i = 0; i < this.freeList.length; i++) {
      const block = this.freeList[i] as Block;
      if (block.size < size) continue;
      if (this.strategy === 'first-fit') {
        chosen = i;
        break;
      }
      if (chosen < 0 || block.size < (this.freeList[chosen] as Block).size) chosen = i;
    }
    if (chosen < 0) {
      throw new DeviceRunnerError(
        'ERR_DEVICE_OUT_OF_MEMORY',
        `cannot allocate ${size} bytes: ${this.totalFreeBytes} free, largest block ${this.largestFreeBlock}`,
      );
    }
    const block = this.freeList[chosen] as Block;
    const offset = block.offset;
    if (block.size === size) this.freeList.splice(chosen, 1);
    else {
      block.offset += size;
      block.size -= size;
    }
    const allocation: Allocation = { address: this.baseAddress + offset, size, requested };
    this.live.splice(this.liveIndex(allocation.address), 0, allocation);
    this.committed += size;
    this.peak = Math.max(this.peak, this.committed);
    return allocation;
  }

  /** Whether `address` is the start of a live allocation. */
  isLive(address: number): boolean {
    return this.live[this.liveIndex(address)]?.address === address;
  }

  /** Bytes the callers asked for across live allocations (before rounding up to 64). */
  get requestedBytes(): number {
    let total = 0;
    for (const allocation of this.live) total += allocation.requested;
    return total;
  }

  /** Frees the block at `address`; an unknown address is a no-op returning undefined. */
  free(address: number): Allocation | undefined {
    const allocation = this.forget(address);
    if (!allocation) return undefined;
    this.insertFree({ offset: allocation.address - this.baseAddress, size: allocation.size });
    return allocation;
  }

  /**
   * Drops the record of `address` without returning its bytes to the free list: after a
   * device failure the memory is not ours to reuse until the arena is reset.
   */
  forget(address: number): Allocation | undefined {
    const index = this.liveIndex(address);
    const allocation = this.live[index];
    if (!allocation || allocation.address !== address) return undefined;
    this.live.splice(index, 1);
    this.committed -= allocation.size;
    return allocation;
  }

  /**
   * The live allocation whose requested bytes contain [address, address + length), if
   * any; the rounding slack is not addressable, so an overrun is caught.
   */
  find(address: number, length: number): Allocation | undefined {
    const index = this.liveIndex(address + 1) - 1;
    const allocation = this.live[index];
    if (!allocation) return undefined;
    if (
      address < allocation.address ||
      address + length > allocation.address + allocation.requested
    ) {
      return undefined;
    }
    return allocation;
  }

  /** Frees everything and resets the peak: the arena is as constructed. */
  reset(): void {
    this.live = [];
    this.freeList = [{ offset: 0, size: this.capacity }];
    this.committed = 0;
    this.peak = 0;
  }

  /** First index whose address is >= `address` (binary search over live). */
  private liveIndex(address: number): number {
    let lo = 0;
    let hi = this.live.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.live[mid] as Allocation).address < address) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insertFree(block: Block): void {
    let lo = 0;
    let hi = this.freeList.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.freeList[mid] as Block).offset < block.offset) lo = mid + 1;
      else hi = mid;
    }
    const previous = this.freeList[lo - 1];
    const next = this.freeList[lo];
    if (previous && previous.offset + previous.size === block.offset) {
      previous.size += block.size;
      if (next && previous.offset + previous.size === next.offset) {
        previous.size += next.size;
        this.freeList.splice(lo, 1);
      }
    } else if (next && block.offset + block.size === next.offset) {
      next.offset = block.offset;
      next.size += block.size;
    } else {
      this.freeList.splice(lo, 0, block);
    }
  }
}
