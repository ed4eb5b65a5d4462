import { AicpuModel } from './aicpu.js';
import { type ChipBuffer, ChipBufferPool } from './chip-buffer-pool.js';
import { type ChipCallableView, parseChipCallable } from './chip-callable.js';
import {
  alignUp,
  CALLABLE_ALIGN,
  DEFAULT_CHIP_MAX_TENSOR_ARGS,
  MAX_REGISTERED_CALLABLE_IDS,
} from './constants.js';
import { DeviceRunnerError, describeValue, invalidArgument } from './errors.js';
import { checkFuncIds } from './func-table.js';
import { type LoadedOrchestration, loadOrchestration } from './orchestration.js';
import type {
  ChipBufferStats,
  DeviceRunnerOptions,
  DeviceRunnerStats,
  Orchestration,
  RegisteredCallable,
  RegisterOptions,
  RegisterResult,
} from './runner-types.js';
import { SimDevice } from './sim-device.js';

interface CallableRecord extends Omit<RegisteredCallable, 'loaded' | 'devOrchSo'> {
  readonly buffer: ChipBuffer;
  devOrchSo: number;
  /** null between record and load; a registered callable always has it. */
  loaded: LoadedOrchestration | null;
}

/**
 * Host-side runner: registers ChipCallables under callable ids, one refcounted device
 * buffer per distinct content, the AICPU reading the orch in place at chipDev + header_size.
 */
export class DeviceRunner {
  readonly device: SimDevice;
  readonly maxTensorArgs: number;
  readonly aicpu: AicpuModel;
  private readonly pool: ChipBufferPool;
  private readonly hostSymbols: readonly string[];
  private readonly callables = new Map<number, CallableRecord>();
  private readonly dispatchTable = new Map<number, number>();
  private runInFlight: number | null = null;
  private boundCid: number | null = null;
  private peakCommitted = 0;
  private counters = { hostLoads: 0, registrations: 0, failedRegistrations: 0, unregistrations: 0 };

  constructor(options: DeviceRunnerOptions = {}) {
    const legacy = (options as { memoryDesign?: unknown }).memoryDesign;
    if (legacy !== undefined && legacy !== 'refcounted') {
      // The pre-#1295 model moved to the package's benchmark (bench/legacy-1082.ts).
      invalidArgument("undefined or 'refcounted'", 'memoryDesign', legacy);
    }
    this.hostSymbols = [...(options.hostSymbols ?? [])];
    this.maxTensorArgs = options.maxTensorArgs ?? DEFAULT_CHIP_MAX_TENSOR_ARGS;
    this.device =
      options.device ??
      new SimDevice(
        options.deviceCapacity === undefined ? {} : { capacity: options.deviceCapacity },
      );
    this.pool = new ChipBufferPool(
      this.device,
      options.contentHash ? { hash: options.contentHash } : {},
    );
    this.aicpu = new AicpuModel(this.device);
  }

  /**
   * admission → parse and func_id check → upload (dedup; lease) → validate → record → AICPU
   * register (device orchestration) or host load. Any failure after the upload releases the
   * lease.
   */
  registerCallable(
    cid: number,
    callable: Uint8Array,
    options: RegisterOptions = {},
  ): RegisterResult {
    try {
      const result = this.register(cid, callable, options);
      this.counters.registrations++;
      return result;
    } catch (error) {
      this.counters.failedRegistrations++;
      throw error;
    }
  }

  private register(cid: number, callable: Uint8Array, options: RegisterOptions): RegisterResult {
    if (!(callable instanceof Uint8Array)) invalidArgument('a Uint8Array', 'callable', callable);
    const orchestration = options.orchestration ?? 'device';
    if (orchestration !== 'device' && orchestration !== 'host') {
      invalidArgument("'device' or 'host'", 'options.orchestration', orchestration);
    }
    this.admit('registerCallable');
    const parsed = parseChipCallable(callable, { maxTensorArgs: this.maxTensorArgs });
    checkFuncIds(parsed);

    const lease = this.pool.acquire(callable, parsed);
    let recorded = false;
    try {
      this.validate(cid, parsed);
      const record = this.record(cid, parsed, lease.buffer, orchestration);
      recorded = true;
      this.loadOrchestration(record, parsed);
      this.trackPeak();
      return {
        callable: publicView(record),
        uploaded: lease.uploaded,
        bytesUploaded: lease.uploaded ? parsed.totalSize : 0,
      };
    } catch (error) {
      // The guard: the pool and device end exactly as before this call.
      if (recorded) this.callables.delete(cid);
      this.pool.release(lease.buffer);
      this.trackPeak();
      throw error;
    }
  }

  /** Unknown cid ⇒ no-op (false). Otherwise drops the registration and its lease. */
  unregisterCallable(cid: number): boolean {
    this.admit('unregisterCallable');
    const record = this.callables.get(cid);
    if (!record) return false;
    this.callables.delete(cid);
    // Stale dispatch entries would point into memory the allocator may hand out again.
    if (this.boundCid === cid) this.clearDispatch();
    this.pool.release(record.buffer);
    this.counters.unregistrations++;
    return true;
  }

  /**
   * Clears the func_id → address table, then replays `cid`'s pairs. Returns the table.
   * Refused while a run is in flight: the running callable's table must stay as it is.
   */
  bind(cid: number): ReadonlyMap<number, number> {
    this.admit('bind');
    return this.bindUnchecked(cid);
  }

  private bindUnchecked(cid: number): ReadonlyMap<number, number> {
    this.clearDispatch();
    const record = this.callables.get(cid);
    if (!record) {
      throw new DeviceRunnerError(
        'ERR_CALLABLE_NOT_REGISTERED',
        `Expected a registered callable id for bind but received ${describeValue(cid)}`,
      );
    }
    for (const [funcId, address] of record.dispatch) this.dispatchTable.set(funcId, address);
    this.boundCid = cid;
    return this.dispatchTable;
  }

  /** Binds `cid` and marks a run in flight: (un)registration is refused until endRun. */
  beginRun(cid: number): ReadonlyMap<number, number> {
    this.admit('beginRun');
    const table = this.bindUnchecked(cid);
    this.runInFlight = cid;
    return table;
  }

  endRun(): void {
    this.runInFlight = null;
  }

  get dispatch(): ReadonlyMap<number, number> {
    return this.dispatchTable;
  }

  get isRunInFlight(): boolean {
    return this.runInFlight !== null;
  }

  /** Frees every remaining buffer regardless of refcount, clears state and counters. */
  finalize(): void {
    this.runInFlight = null;
    this.clearDispatch();
    this.callables.clear();
    this.pool.releaseAll();
    this.pool.resetCounters();
    this.aicpu.reset();
    this.peakCommitted = 0;
    this.counters = { hostLoads: 0, registrations: 0, failedRegistrations: 0, unregistrations: 0 };
  }

  isRegistered(cid: number): boolean {
    return this.callables.has(cid);
  }

  callable(cid: number): RegisteredCallable | undefined {
    const record = this.callables.get(cid);
    return record ? publicView(record) : undefined;
  }

  chipBuffers(): ChipBufferStats[] {
    return this.pool.buffers().map((buffer) => ({
      devAddr: buffer.devAddr,
      size: buffer.size,
      reservedBytes: alignUp(buffer.size, CALLABLE_ALIGN),
      refcount: buffer.refcount,
      hash: buffer.hash,
    }));
  }

  stats(): DeviceRunnerStats {
    const deviceStats = this.device.stats();
    return {
      registeredCallables: this.callables.size,
      liveChipBuffers: this.pool.size,
      committedBytes: this.pool.reservedBytes,
      committedRequestedBytes: this.pool.requestedBytes,
      peakCommittedBytes: this.peakCommitted,
      deviceCommittedBytes: deviceStats.committedBytes,
      deviceCommittedRequestedBytes: deviceStats.committedRequestedBytes,
      fragmentation: deviceStats.fragmentation,
      freeBlocks: deviceStats.freeBlocks,
      aicpuLoads: this.aicpu.loads,
      hostLoads: this.counters.hostLoads,
      registrations: this.counters.registrations,
      failedRegistrations: this.counters.failedRegistrations,
      unregistrations: this.counters.unregistrations,
      uploads: this.pool.counters.uploads,
      dedupHits: this.pool.counters.hits,
      hashCollisions: this.pool.counters.collisions,
      bytesUploaded: this.pool.counters.bytesUploaded,
      freeFailures: this.pool.counters.freeFailures,
      leakedBytes: this.pool.counters.leakedBytes,
      perCallable: [...this.callables.values()]
        .sort((a, b) => a.cid - b.cid)
        .map((record) => ({
          cid: record.cid,
          orchestration: record.orchestration,
          chipDev: record.chipDev,
          bytes: record.totalSize,
          refcount: record.buffer.refcount,
        })),
    };
  }

  private trackPeak(): void {
    this.peakCommitted = Math.max(this.peakCommitted, this.pool.reservedBytes);
  }

  private admit(operation: string): void {
    if (this.runInFlight !== null) {
      throw new DeviceRunnerError(
        'ERR_RUN_IN_FLIGHT',
        `${operation} is not allowed while callable ${this.runInFlight} is running`,
      );
    }
  }

  private validate(cid: number, parsed: ChipCallableView): void {
    if (!Number.isInteger(cid) || cid < 0 || cid >= MAX_REGISTERED_CALLABLE_IDS) {
      throw new DeviceRunnerError(
        'ERR_CALLABLE_ID_OUT_OF_RANGE',
        `Expected an integer in [0, ${MAX_REGISTERED_CALLABLE_IDS}) for callable id but received ${describeValue(cid)}`,
      );
    }
    if (this.callables.has(cid)) {
      throw new DeviceRunnerError(
        'ERR_CALLABLE_ALREADY_REGISTERED',
        `callable id ${cid} is already registered`,
      );
    }
    if (parsed.binarySize === 0) {
      throw new DeviceRunnerError('ERR_EMPTY_ORCHESTRATION', 'the orchestration .so is empty');
    }
  }

  private record(
    cid: number,
    parsed: ChipCallableView,
    buffer: ChipBuffer,
    orchestration: Orchestration,
  ): CallableRecord {
    const record: CallableRecord = {
      cid,
      orchestration,
      buffer,
      chipDev: buffer.devAddr,
      totalSize: parsed.totalSize,
      headerSize: parsed.headerSize,
      devOrchSo: buffer.devAddr + parsed.headerSize,
      orchSize: parsed.binarySize,
      funcName: parsed.funcName,
      configName: parsed.configName,
      dispatch: buffer.funcTable,
      loaded: null,
    };
    this.callables.set(cid, record);
    return record;
  }

  /** Device path: the AICPU loads the orch in place; host path: the host loads it. */
  private loadOrchestration(record: CallableRecord, parsed: ChipCallableView): void {
    if (record.orchestration === 'host') {
      try {
        record.loaded = loadOrchestration(parsed.orch, parsed.funcName, parsed.configName, {
          mode: 'host',
          hostSymbols: this.hostSymbols,
        });
      } catch (error) {
        throw new DeviceRunnerError(
          'ERR_HOST_LOAD_FAILED',
          `the host could not load the orchestration of callable ${record.cid}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      this.counters.hostLoads++;
      return;
    }
    record.loaded = this.aicpu.load(
      record.cid,
      record.devOrchSo,
      record.orchSize,
      record.funcName,
      record.configName,
    );
  }

  private clearDispatch(): void {
    this.dispatchTable.clear();
    this.boundCid = null;
  }
}

function publicView(record: CallableRecord): RegisteredCallable {
  const { buffer: _buffer, loaded, ...rest } = record;
  if (!loaded) throw new Error(`callable ${record.cid} is recorded but not loaded`);
  return { ...rest, loaded };
}
