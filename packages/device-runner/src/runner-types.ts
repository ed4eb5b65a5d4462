// The public shapes of the runner: options, results and stats.

import type { LoadedOrchestration } from './orchestration.js';
import type { SimDevice } from './sim-device.js';

/** 'device' = tensormap_and_ringbuffer (AICPU runs the orch); 'host' = host_build_graph. */
export type Orchestration = 'device' | 'host';

export interface DeviceRunnerOptions {
  /** Device to use; by default the runner creates a SimDevice of `deviceCapacity` bytes. */
  readonly device?: SimDevice;
  readonly deviceCapacity?: number;
  /** CHIP_MAX_TENSOR_ARGS of the callables this runner accepts (256 or 128). */
  readonly maxTensorArgs?: number;
  /**
   * Symbols the host process provides to host orchestration objects: host_build_graph
   * dlopens with RTLD_NOW, so every other non-weak import fails the load. Default none.
   */
  readonly hostSymbols?: readonly string[];
  /** Override of the content_hash dedup key (used to force collisions in tests). */
  readonly contentHash?: (bytes: Uint8Array) => bigint;
}

export interface RegisterOptions {
  readonly orchestration?: Orchestration;
}

export interface RegisteredCallable {
  readonly cid: number;
  readonly orchestration: Orchestration;
  readonly chipDev: number;
  readonly totalSize: number;
  readonly headerSize: number;
  /** Where the orch bytes the AICPU reads live; chipDev + header_size in the fixed design. */
  readonly devOrchSo: number;
  readonly orchSize: number;
  readonly funcName: string;
  readonly configName: string;
  /** (func_id, device address of the child CoreCallable) in child order. */
  readonly dispatch: readonly (readonly [number, number])[];
  readonly loaded: LoadedOrchestration;
}

export interface RegisterResult {
  readonly callable: RegisteredCallable;
  /** false when the bytes were already on the device (dedup hit). */
  readonly uploaded: boolean;
  /** Device bytes copied by this registration: total_size on an upload, 0 on a dedup hit. */
  readonly bytesUploaded: number;
}

export interface CallableStats {
  readonly cid: number;
  readonly orchestration: Orchestration;
  readonly chipDev: number;
  readonly bytes: number;
  readonly refcount: number;
}

export interface ChipBufferStats {
  readonly devAddr: number;
  readonly size: number;
  /** Bytes the allocator reserved for it: size rounded up to 64. */
  readonly reservedBytes: number;
  readonly refcount: number;
  readonly hash: bigint;
}

export interface DeviceRunnerStats {
  readonly registeredCallables: number;
  readonly liveChipBuffers: number;
  /** Device bytes held by this runner: sum over its live buffers of size rounded up to 64. */
  readonly committedBytes: number;
  /** The same at the sizes requested (total_size each), as simpler #1592 reports them. */
  readonly committedRequestedBytes: number;
  readonly peakCommittedBytes: number;
  /** Whole-device figures (include allocations that are not the runner's). */
  readonly deviceCommittedBytes: number;
  readonly deviceCommittedRequestedBytes: number;
  readonly fragmentation: number;
  /** Free-list blocks of the device allocator. */
  readonly freeBlocks: number;
  readonly aicpuLoads: number;
  readonly hostLoads: number;
  readonly registrations: number;
  /** registerCallable calls that threw, whatever the reason (bad bytes, device, AICPU, run). */
  readonly failedRegistrations: number;
  readonly unregistrations: number;
  readonly uploads: number;
  readonly dedupHits: number;
  readonly hashCollisions: number;
  readonly bytesUploaded: number;
  /** Buffers whose device free failed on release, and their reserved bytes (still on the device). */
  readonly freeFailures: number;
  readonly leakedBytes: number;
  readonly perCallable: readonly CallableStats[];
}
