import { alignUp, CALLABLE_ALIGN } from './constants.js';
import { elfBuildId64 } from './elf.js';
import type { SimDevice } from './sim-device.js';

export interface OrchSoBuffer {
  readonly key: bigint;
  readonly devAddr: number;
  readonly size: number;
}

/**
 * simpler's orch_so_dedup_ before PR #1295 (issue #1082): a second device copy of every
 * distinct orch .so, keyed by its build id, freed only at finalize. Kept only so the
 * `legacy-1082` memory design can show the cost of the old behaviour side by side.
 */
export class LegacyOrchSoPool {
  private readonly byKey = new Map<bigint, OrchSoBuffer>();
  bytesUploaded = 0;
  private reserved = 0;

  constructor(private readonly device: SimDevice) {}

  upload(orch: Uint8Array): OrchSoBuffer {
    const key = elfBuildId64(orch);
    const existing = this.byKey.get(key);
    if (existing) return existing;
    const devAddr = this.device.malloc(orch.length);
    try {
      this.device.copyToDevice(devAddr, orch);
    } catch (error) {
      this.device.free(devAddr);
      throw error;
    }
    const buffer = { key, devAddr, size: orch.length };
    this.byKey.set(key, buffer);
    this.reserved += alignUp(orch.length, CALLABLE_ALIGN);
    this.bytesUploaded += orch.length;
    return buffer;
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Reserved bytes (each size rounded up to 64, as the allocator does). */
  get committedBytes(): number {
    return this.reserved;
  }

  releaseAll(): void {
    for (const buffer of this.byKey.values()) this.device.free(buffer.devAddr);
    this.byKey.clear();
    this.bytesUploaded = 0;
    this.reserved = 0;
  }
}
