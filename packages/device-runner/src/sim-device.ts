import { type Allocation, DeviceAllocator, type FitStrategy } from './device-allocator.js';
import { DeviceRunnerError, invalidArgument } from './errors.js';

export interface SimDeviceOptions {
  /** Bytes of simulated global memory, backed by one real ArrayBuffer. Default 64 MiB. */
  readonly capacity?: number;
  readonly baseAddress?: number;
  readonly strategy?: FitStrategy;
}

export type InjectableOperation = 'alloc' | 'h2d' | 'free';

export interface SimDeviceStats {
  readonly capacity: number;
  /** Live allocations, each rounded up to 64 (what the allocator reserves). */
  readonly committedBytes: number;
  /** Live allocations at the sizes requested: what simpler's committed_device_memory() reports (#1592). */
  readonly committedRequestedBytes: number;
  readonly peakBytes: number;
  readonly liveAllocations: number;
  readonly totalFreeBytes: number;
  readonly largestFreeBlock: number;
  /** Free-list blocks: 1 when free space is one hole, more as it shatters. */
  readonly freeBlocks: number;
  readonly fragmentation: number;
  readonly allocs: number;
  readonly frees: number;
  /** Frees of addresses that were not live (no-ops); a double free shows up here. */
  readonly unknownFrees: number;
  /** Frees that failed (injected); the block stays allocated. */
  readonly failedFrees: number;
  /** Bytes dropped without freeing while abandoned. */
  readonly abandonedBytes: number;
  readonly h2dCopies: number;
  readonly h2dBytes: number;
  readonly d2hBytes: number;
  readonly abandoned: boolean;
}

export const DEFAULT_DEVICE_CAPACITY = 64 * 1024 * 1024;

/**
 * Simulated device: an arena allocator over a real byte array, H2D/D2H copies, injectable
 * failures and an abandon mode for after a device failure.
 */
export class SimDevice {
  readonly allocator: DeviceAllocator;
  private readonly memory: Uint8Array;
  private readonly pendingFailures: Record<InjectableOperation, number> = {
    alloc: 0,
    h2d: 0,
    free: 0,
  };
  private abandoned = false;
  private counters = {
    allocs: 0,
    frees: 0,
    unknownFrees: 0,
    failedFrees: 0,
    abandonedBytes: 0,
    h2dCopies: 0,
    h2dBytes: 0,
    d2hBytes: 0,
  };

  constructor(options: SimDeviceOptions = {}) {
    this.allocator = new DeviceAllocator({
      capacity: options.capacity ?? DEFAULT_DEVICE_CAPACITY,
      ...(options.baseAddress === undefined ? {} : { baseAddress: options.baseAddress }),
      ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
    });
    this.memory = new Uint8Array(this.allocator.capacity);
  }

  /** Makes the next `count` operations of this kind fail (as a driver error would). */
  failNext(operation: InjectableOperation, count = 1): void {
    if (operation !== 'alloc' && operation !== 'h2d' && operation !== 'free') {
      invalidArgument("'alloc', 'h2d' or 'free'", 'operation', operation);
    }
    if (!Number.isInteger(count) || count < 0) invalidArgument('an integer >= 0', 'count', count);
    this.pendingFailures[operation] = count;
  }

  pendingFailureCount(operation: InjectableOperation): number {
    return this.pendingFailures[operation];
  }

  private takeFailure(operation: InjectableOperation): boolean {
    if (this.pendingFailures[operation] === 0) return false;
    this.pendingFailures[operation]--;
    return true;
  }

  private checkUsable(what: string): void {
    if (this.abandoned) {
      throw new DeviceRunnerError(
        'ERR_DEVICE_LOST',
        `${what} on a device abandoned after a failure`,
      );
    }
  }

  malloc(size: number): number {
    this.checkUsable('malloc');
    if (this.takeFailure('alloc')) {
      throw new DeviceRunnerError(
        'ERR_DEVICE_ALLOC_FAILED',
        `injected failure allocating ${size} bytes`,
      );
    }
    const allocation = this.allocator.alloc(size);
    this.counters.allocs++;
    return allocation.address;
  }

  /**
   * Frees a live block; unknown addresses are a no-op (counted). Abandoned: forgets only.
   * An injected failure throws ERR_DEVICE_FREE_FAILED and leaves the block allocated.
   */
  free(address: number): boolean {
    if (!this.abandoned && this.allocator.isLive(address) && this.takeFailure('free')) {
      this.counters.failedFrees++;
      throw new DeviceRunnerError(
        'ERR_DEVICE_FREE_FAILED',
        `injected failure freeing the block at 0x${address.toString(16)}`,
      );
    }
    const allocation = this.abandoned
      ? this.allocator.forget(address)
      : this.allocator.free(address);
    if (!allocation) {
      this.counters.unknownFrees++;
      return false;
    }
    if (this.abandoned) this.counters.abandonedBytes += allocation.size;
    else this.counters.frees++;
    return true;
  }

  /** H2D: the whole range must lie inside one live allocation. */
  copyToDevice(address: number, bytes: Uint8Array): void {
    this.checkUsable('H2D copy');
    this.resolve(address, bytes.length, 'H2D copy');
    if (this.takeFailure('h2d')) {
      throw new DeviceRunnerError(
        'ERR_DEVICE_COPY_FAILED',
        `injected failure copying ${bytes.length} bytes to 0x${address.toString(16)}`,
      );
    }
    this.memory.set(bytes, address - this.allocator.baseAddress);
    this.counters.h2dCopies++;
    this.counters.h2dBytes += bytes.length;
  }

  /** D2H: returns a copy of device bytes (what the AICPU or a test reads back). */
  copyFromDevice(address: number, length: number): Uint8Array {
    this.checkUsable('D2H copy');
    this.resolve(address, length, 'D2H copy');
    const start = address - this.allocator.baseAddress;
    this.counters.d2hBytes += length;
    return this.memory.slice(start, start + length);
  }

  private resolve(address: number, length: number, what: string): Allocation {
    if (!Number.isSafeInteger(length) || length < 0) {
      invalidArgument('a non-negative integer', `${what} length`, length);
    }
    const allocation = this.allocator.find(address, Math.max(length, 1));
    if (!allocation) {
      throw new DeviceRunnerError(
        'ERR_DEVICE_BAD_ADDRESS',
        `${what} of ${length} bytes at 0x${address.toString(16)} is outside every live allocation`,
      );
    }
    return allocation;
  }

  /** Enter abandon mode: the device failed, so frees only forget and new work is refused. */
  abandon(): void {
    this.abandoned = true;
  }

  get isAbandoned(): boolean {
    return this.abandoned;
  }

  /** Frees (or, abandoned, forgets) everything and returns the device to its initial state. */
  finalize(): void {
    this.pendingFailures.free = 0;
    for (const allocation of [...this.allocator.allocations()]) this.free(allocation.address);
    this.allocator.reset();
    this.abandoned = false;
    this.pendingFailures.alloc = 0;
    this.pendingFailures.h2d = 0;
  }

  stats(): SimDeviceStats {
    return {
      capacity: this.allocator.capacity,
      committedBytes: this.allocator.committedBytes,
      committedRequestedBytes: this.allocator.requestedBytes,
      peakBytes: this.allocator.peakBytes,
      liveAllocations: this.allocator.liveCount,
      totalFreeBytes: this.allocator.totalFreeBytes,
      largestFreeBlock: this.allocator.largestFreeBlock,
      freeBlocks: this.allocator.freeBlockCount,
      fragmentation: this.allocator.fragmentation,
      ...this.counters,
      abandoned: this.abandoned,
    };
  }
}
