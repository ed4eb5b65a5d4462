// The two memory designs behind one small interface, so the benchmark and the repro test
// drive them with the same code.
import { DeviceRunner, type SimDevice } from '../src/index.js';
import { Legacy1082Runner } from './legacy-1082.js';

export type DesignName = 'refcounted' | 'legacy-1082';
export const DESIGNS: readonly DesignName[] = ['refcounted', 'legacy-1082'];

export interface Design {
  readonly name: DesignName;
  /** Registers on the device path; returns device bytes uploaded by this registration. */
  register(cid: number, bytes: Uint8Array): number;
  unregister(cid: number): void;
  isRegistered(cid: number): boolean;
  /** Live device buffers held (chip buffers, plus orch copies for the old design). */
  liveBuffers(): number;
  finalize(): void;
}

export function makeDesign(name: DesignName, device: SimDevice): Design {
  if (name === 'refcounted') {
    const runner = new DeviceRunner({ device });
    return {
      name,
      register: (cid, bytes) => runner.registerCallable(cid, bytes).bytesUploaded,
      unregister: (cid) => void runner.unregisterCallable(cid),
      isRegistered: (cid) => runner.isRegistered(cid),
      liveBuffers: () => runner.stats().liveChipBuffers,
      finalize: () => runner.finalize(),
    };
  }
  const legacy = new Legacy1082Runner(device);
  const registered = new Set<number>();
  return {
    name,
    register: (cid, bytes) => {
      const { bytesUploaded } = legacy.registerCallable(cid, bytes);
      registered.add(cid);
      return bytesUploaded;
    },
    unregister: (cid) => {
      legacy.unregisterCallable(cid);
      registered.delete(cid);
    },
    isRegistered: (cid) => registered.has(cid),
    liveBuffers: () => legacy.stats().liveChipBuffers + legacy.stats().liveOrchCopies,
    finalize: () => {
      legacy.finalize();
      registered.clear();
    },
  };
}
