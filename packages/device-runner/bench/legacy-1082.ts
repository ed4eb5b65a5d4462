/**
 * simpler's host runtime before PR #1295 (issue #1082), modelled on the same simulated device
 * so the benchmark and the repro test can show what the fix changed. Not shipped: it lives
 * next to the benchmark and is imported by relative path.
 *
 * What the pre-fix code did (e7de19eee^, device_runner_base.cpp and runtime_maker.cpp):
 * - upload_chip_callable_buffer: content_hash dedup with no refcount; a callable with no
 *   children uploads nothing; an uploaded chip buffer is freed only by finalize(), also when
 *   the registration that uploaded it fails later (the leak of issue #1082).
 * - record_device_orch_callable (device orchestration): a second copy of the orch .so in
 *   orch_so_dedup_, keyed by elf_build_id_64, refcounted per registration and freed on
 *   unregister when the count reaches 0 (device_runner_base.cpp:877-900); a failed AICPU
 *   load unregisters, which drops that count too. The AICPU reads this copy.
 * - host orchestration records no orch copy.
 */
import {
  AicpuModel,
  alignUp,
  CALLABLE_ALIGN,
  type ChipCallableView,
  contentHash,
  DeviceRunnerError,
  elfBuildId64,
  MAX_FUNC_ID,
  MAX_REGISTERED_CALLABLE_IDS,
  parseChipCallable,
  patchedScratch,
  type SimDevice,
} from '../src/index.js';

interface DeviceCopy {
  readonly devAddr: number;
  readonly size: number;
  refcount: number;
}

interface LegacyRecord {
  readonly orchKey: bigint | null;
  readonly chipDev: number;
}

export interface LegacyRegisterResult {
  readonly chipDev: number;
  /** Where the AICPU reads the orch: the second copy (0 for host orchestration). */
  readonly devOrchSo: number;
  /** Device bytes copied by this registration: chip buffer (if new) + orch copy (if new). */
  readonly bytesUploaded: number;
}

export interface LegacyStats {
  readonly liveChipBuffers: number;
  readonly liveOrchCopies: number;
  /** Sum over live device allocations of this runner, each rounded up to 64. */
  readonly committedBytes: number;
  readonly bytesUploaded: number;
}

export class Legacy1082Runner {
  readonly aicpu: AicpuModel;
  private readonly chipBuffers = new Map<bigint, DeviceCopy>();
  private readonly orchCopies = new Map<bigint, DeviceCopy>();
  private readonly callables = new Map<number, LegacyRecord>();
  private uploaded = 0;

  constructor(
    readonly device: SimDevice,
    private readonly maxTensorArgs?: number,
  ) {
    this.aicpu = new AicpuModel(device);
  }

  registerCallable(
    cid: number,
    bytes: Uint8Array,
    options: { orchestration?: 'device' | 'host' } = {},
  ): LegacyRegisterResult {
    const parsed = parseChipCallable(
      bytes,
      this.maxTensorArgs === undefined ? {} : { maxTensorArgs: this.maxTensorArgs },
    );
    let bytesUploaded = 0;
    // register_callable_impl: upload first (kept forever), validate afterwards.
    const chip = this.uploadChip(bytes, parsed);
    bytesUploaded += chip.uploaded;
    for (const child of parsed.children) {
      if (child.funcId < 0 || child.funcId >= MAX_FUNC_ID) fail('ERR_FUNC_ID_OUT_OF_RANGE');
    }
    if (parsed.binarySize === 0) fail('ERR_EMPTY_ORCHESTRATION');
    if (!Number.isInteger(cid) || cid < 0 || cid >= MAX_REGISTERED_CALLABLE_IDS) {
      fail('ERR_CALLABLE_ID_OUT_OF_RANGE');
    }
    if (this.callables.has(cid)) fail('ERR_CALLABLE_ALREADY_REGISTERED');
    if (options.orchestration === 'host') {
      this.callables.set(cid, { orchKey: null, chipDev: chip.devAddr });
      return { chipDev: chip.devAddr, devOrchSo: 0, bytesUploaded };
    }
    const orchKey = elfBuildId64(parsed.orch);
    const orch = this.acquireOrchCopy(orchKey, parsed.orch);
    bytesUploaded += orch.uploaded;
    this.callables.set(cid, { orchKey, chipDev: chip.devAddr });
    try {
      this.aicpu.load(cid, orch.devAddr, parsed.binarySize, parsed.funcName, parsed.configName);
    } catch (error) {
      this.unregisterCallable(cid);
      throw error;
    }
    return { chipDev: chip.devAddr, devOrchSo: orch.devAddr, bytesUploaded };
  }

  unregisterCallable(cid: number): boolean {
    const record = this.callables.get(cid);
    if (!record) return false;
    this.callables.delete(cid);
    if (record.orchKey === null) return true;
    const copy = this.orchCopies.get(record.orchKey);
    if (copy && --copy.refcount <= 0) {
      this.device.free(copy.devAddr);
      this.orchCopies.delete(record.orchKey);
    }
    return true;
  }

  finalize(): void {
    for (const copy of [...this.chipBuffers.values(), ...this.orchCopies.values()]) {
      this.device.free(copy.devAddr);
    }
    this.chipBuffers.clear();
    this.orchCopies.clear();
    this.callables.clear();
    this.aicpu.reset();
    this.uploaded = 0;
  }

  stats(): LegacyStats {
    let committed = 0;
    for (const copy of [...this.chipBuffers.values(), ...this.orchCopies.values()]) {
      committed += alignUp(copy.size, CALLABLE_ALIGN);
    }
    return {
      liveChipBuffers: this.chipBuffers.size,
      liveOrchCopies: this.orchCopies.size,
      committedBytes: committed,
      bytesUploaded: this.uploaded,
    };
  }

  /** upload_chip_callable_buffer before the fix: no children ⇒ no upload; a hit takes no ref. */
  private uploadChip(
    bytes: Uint8Array,
    parsed: ChipCallableView,
  ): { devAddr: number; uploaded: number } {
    if (parsed.children.length === 0) return { devAddr: 0, uploaded: 0 };
    const key = contentHash(bytes, parsed.totalSize);
    const hit = this.chipBuffers.get(key);
    if (hit) return { devAddr: hit.devAddr, uploaded: 0 };
    const devAddr = this.copyToNewAllocation(bytes, parsed);
    this.chipBuffers.set(key, { devAddr, size: parsed.totalSize, refcount: 0 });
    return { devAddr, uploaded: parsed.totalSize };
  }

  private acquireOrchCopy(key: bigint, orch: Uint8Array): { devAddr: number; uploaded: number } {
    const hit = this.orchCopies.get(key);
    if (hit) {
      hit.refcount++;
      return { devAddr: hit.devAddr, uploaded: 0 };
    }
    const devAddr = this.device.malloc(orch.length);
    try {
      this.device.copyToDevice(devAddr, orch);
    } catch (error) {
      this.device.free(devAddr);
      throw error;
    }
    this.uploaded += orch.length;
    this.orchCopies.set(key, { devAddr, size: orch.length, refcount: 1 });
    return { devAddr, uploaded: orch.length };
  }

  private copyToNewAllocation(bytes: Uint8Array, parsed: ChipCallableView): number {
    const devAddr = this.device.malloc(parsed.totalSize);
    try {
      this.device.copyToDevice(devAddr, patchedScratch(bytes, parsed, devAddr));
    } catch (error) {
      this.device.free(devAddr);
      throw error;
    }
    this.uploaded += parsed.totalSize;
    return devAddr;
  }
}

function fail(
  code:
    | 'ERR_FUNC_ID_OUT_OF_RANGE'
    | 'ERR_EMPTY_ORCHESTRATION'
    | 'ERR_CALLABLE_ID_OUT_OF_RANGE'
    | 'ERR_CALLABLE_ALREADY_REGISTERED',
): never {
  throw new DeviceRunnerError(code, `legacy-1082 model: ${code}`);
}
