import { MAX_REGISTERED_CALLABLE_IDS } from './constants.js';
import { DeviceRunnerError, invalidArgument } from './errors.js';
import { type LoadedOrchestration, loadOrchestration } from './orchestration.js';
import type { SimDevice } from './sim-device.js';

export interface AicpuSlot extends LoadedOrchestration {
  readonly cid: number;
  readonly devOrchSo: number;
  readonly size: number;
}

/**
 * The AICPU side of registration: one slot per callable id. Loading reads the orch bytes
 * from device memory (a snapshot, as the real AICPU writes a temp file and dlopens it).
 */
export class AicpuModel {
  private readonly slots: (AicpuSlot | undefined)[];
  loads = 0;

  constructor(
    private readonly device: SimDevice,
    readonly slotCount: number = MAX_REGISTERED_CALLABLE_IDS,
  ) {
    this.slots = new Array(slotCount).fill(undefined);
  }

  /**
   * Loads into slot `cid`, replacing what was there; throws AICPU_LOAD_FAILED. The old slot
   * is cleared before anything is read, as upstream's load_orch_so does (aicpu_executor.cpp
   * `entry = OrchSoEntry{}`): a failed re-load leaves the slot empty, never pointing at a
   * buffer that may already be freed.
   */
  load(
    cid: number,
    devOrchSo: number,
    size: number,
    funcName: string,
    configName: string,
  ): AicpuSlot {
    if (!Number.isInteger(cid) || cid < 0 || cid >= this.slotCount) {
      invalidArgument(`an integer in [0, ${this.slotCount})`, 'AICPU slot', cid);
    }
    this.slots[cid] = undefined;
    let loaded: LoadedOrchestration;
    try {
      const snapshot = this.device.copyFromDevice(devOrchSo, size);
      loaded = loadOrchestration(snapshot, funcName, configName);
    } catch (error) {
      throw new DeviceRunnerError(
        'ERR_AICPU_LOAD_FAILED',
        `AICPU could not load the orchestration of callable ${cid} at 0x${devOrchSo.toString(16)}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const slot: AicpuSlot = { ...loaded, cid, devOrchSo, size };
    this.slots[cid] = slot;
    this.loads++;
    return slot;
  }

  /** Unregister does not clear a slot (as upstream); only a reload or reset does. */
  slot(cid: number): AicpuSlot | undefined {
    return this.slots[cid];
  }

  reset(): void {
    this.slots.fill(undefined);
    this.loads = 0;
  }
}
