import type { ChipCallableView } from './chip-callable.js';
import { CoreCallableLayout } from './layout.js';

/** Device address of child i's CoreCallable struct inside a chip buffer at `chipDev`. */
export function childDeviceAddress(chipDev: number, child: { imageOffset: number }): number {
  return chipDev + child.imageOffset;
}

/**
 * Returns a patched scratch copy for upload to `chipDev`: each child's resolved_addr
 * becomes the device address of its kernel binary (simpler chip_callable_layout.h,
 * patch_chip_callable_scratch_for_device). Nothing else changes, in
 * particular not the orch slice, and the caller's bytes are never written.
 */
export function patchedScratch(
  bytes: Uint8Array,
  parsed: ChipCallableView,
  chipDev: number,
): Uint8Array {
  // A fresh copy even for a Node Buffer, whose slice() would alias the caller's memory.
  const scratch = new Uint8Array(bytes.subarray(0, parsed.totalSize));
  const view = new DataView(scratch.buffer);
  for (const child of parsed.children) {
    const binaryAddress = childDeviceAddress(chipDev, child) + CoreCallableLayout.binaryOffset;
    view.setBigUint64(
      child.imageOffset + CoreCallableLayout.resolvedAddr,
      BigInt(binaryAddress),
      true,
    );
  }
  return scratch;
}
