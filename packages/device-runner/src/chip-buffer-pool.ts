import type { ChipCallableView } from './chip-callable.js';
import { alignUp, CALLABLE_ALIGN } from './constants.js';
import { DeviceRunnerError } from './errors.js';
import { type FuncTable, funcTableOf } from './func-table.js';
import { contentHash } from './hashes.js';
import { patchedScratch } from './patch.js';
import type { SimDevice } from './sim-device.js';

/** One device copy of one distinct callable content, shared by every cid that holds it. */
export interface ChipBuffer {
  readonly hash: bigint;
  readonly devAddr: number;
  /** total_size: bytes uploaded. */
  readonly size: number;
  /** Registrations holding a lease on this buffer. */
  refcount: number;
  /** Host copy of the unpatched bytes, compared on every hash hit. */
  readonly bytes: Uint8Array;
  /** Its children's (func_id, device address) pairs: equal bytes, equal table. */
  readonly funcTable: FuncTable;
}

export interface ChipBufferPoolOptions {
  /** Dedup key; FNV-1a content_hash unless overridden (tests force collisions with it). */
  readonly hash?: (bytes: Uint8Array) => bigint;
}

export interface Lease {
  readonly buffer: ChipBuffer;
  /** false when an existing buffer was reused (no bytes moved). */
  readonly uploaded: boolean;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** content_hash -> refcounted chip buffers; a hash collision gets its own buffer. */
export class ChipBufferPool {
  private readonly byHash = new Map<bigint, ChipBuffer[]>();
  private readonly hash: (bytes: Uint8Array) => bigint;
  private count = 0;
  private reserved = 0;
  private requested = 0;
  readonly counters = {
    uploads: 0,
    hits: 0,
    collisions: 0,
    bytesUploaded: 0,
    frees: 0,
    /** Buffers whose device free failed: dropped from the pool, still allocated on the device. */
    freeFailures: 0,
    leakedBytes: 0,
  };

  constructor(
    private readonly device: SimDevice,
    options: ChipBufferPoolOptions = {},
  ) {
    this.hash = options.hash ?? ((bytes) => contentHash(bytes));
  }

  /** Takes a lease on a buffer holding `bytes`, uploading (patched) on a miss. */
  acquire(bytes: Uint8Array, parsed: ChipCallableView): Lease {
    const content = bytes.subarray(0, parsed.totalSize);
    const hash = this.hash(content);
    const bucket = this.byHash.get(hash);
    if (bucket) {
      // Beyond upstream, which trusts the 64-bit hash: a hit must also match byte for byte.
      const match = bucket.find((buffer) => sameBytes(buffer.bytes, content));
      if (match) {
        match.refcount++;
        this.counters.hits++;
        return { buffer: match, uploaded: false };
      }
      this.counters.collisions++;
    }
    const devAddr = this.device.malloc(parsed.totalSize);
    try {
      this.device.copyToDevice(devAddr, patchedScratch(content, parsed, devAddr));
    } catch (error) {
      this.device.free(devAddr);
      throw error;
    }
    const buffer: ChipBuffer = {
      hash,
      devAddr,
      size: parsed.totalSize,
      refcount: 1,
      bytes: new Uint8Array(content),
      funcTable: funcTableOf(parsed, devAddr),
    };
    if (bucket) bucket.push(buffer);
    else this.byHash.set(hash, [buffer]);
    this.count++;
    this.reserved += alignUp(buffer.size, CALLABLE_ALIGN);
    this.requested += buffer.size;
    this.counters.uploads++;
    this.counters.bytesUploaded += parsed.totalSize;
    return { buffer, uploaded: true };
  }

  /** Drops one lease; frees the buffer at refcount 0. Returns whether it was freed. */
  release(buffer: ChipBuffer): boolean {
    if (buffer.refcount <= 0) return false;
    buffer.refcount--;
    if (buffer.refcount > 0) return false;
    this.drop(buffer);
    return true;
  }

  /** Frees every buffer regardless of refcount (finalize). */
  releaseAll(): void {
    for (const buffer of this.buffers()) this.drop(buffer);
  }

  buffers(): ChipBuffer[] {
    return [...this.byHash.values()].flat();
  }

  get size(): number {
    return this.count;
  }

  /** Device bytes reserved by live buffers: each size rounded up to 64, as allocated. */
  get reservedBytes(): number {
    return this.reserved;
  }

  /** Device bytes of live buffers at their requested sizes (total_size each). */
  get requestedBytes(): number {
    return this.requested;
  }

  resetCounters(): void {
    for (const key of Object.keys(this.counters) as (keyof typeof this.counters)[]) {
      this.counters[key] = 0;
    }
  }

  private drop(buffer: ChipBuffer): void {
    const bucket = this.byHash.get(buffer.hash);
    if (!bucket) return;
    const index = bucket.indexOf(buffer);
    if (index < 0) return;
    bucket.splice(index, 1);
    if (bucket.length === 0) this.byHash.delete(buffer.hash);
    buffer.refcount = 0;
    this.count--;
    this.reserved -= alignUp(buffer.size, CALLABLE_ALIGN);
    this.requested -= buffer.size;
    try {
      this.device.free(buffer.devAddr);
      this.counters.frees++;
    } catch (error) {
      // The registration is gone either way (upstream ignores the free's result); the
      // block stays allocated on the device and is counted, never reused by the pool.
      if (!(error instanceof DeviceRunnerError) || error.code !== 'ERR_DEVICE_FREE_FAILED') {
        throw error;
      }
      this.counters.freeFailures++;
      this.counters.leakedBytes += alignUp(buffer.size, CALLABLE_ALIGN);
    }
  }
}
