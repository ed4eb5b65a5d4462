import { layoutsEqual } from '../packing/packing-layout.js';
import type { PackedDataMeta } from './packed-data-meta.js';
import type { LookUpKey } from './provider.js';

/** How a look-up key relates to the cache's entries. */
export const UNNAMED = 0;
export const MISS = 1;
/** Name found, but packed by another ukernel (seed or fingerprint differs). */
export const STALE_SEED = 2;
/** Name, seed and fingerprint found, but another layout or size. */
export const STALE_LAYOUT = 3;
export const HIT = 4;
export type Found =
  | typeof UNNAMED
  | typeof MISS
  | typeof STALE_SEED
  | typeof STALE_LAYOUT
  | typeof HIT;

/**
 * Whether the entry stored under the key's name serves the key. A hit needs the same
 * seed and fingerprint (0 stored = unknown, as in v2 files, which have none), the same
 * layout when both sides have one (v2 entries have none: seed and size decide), and
 * dataSize equal to the key's packedSize. Anything else is a miss, never a read past an
 * entry: XNNPACK's seed XORs shape numbers, so [96, 32] and [112, 48] share one.
 */
export function matchEntry(meta: PackedDataMeta, key: LookUpKey): Found {
  const fingerprintDiffers = meta.fingerprint !== 0 && meta.fingerprint !== key.fingerprint;
  if (meta.seed !== key.seed || fingerprintDiffers) return STALE_SEED;
  if (key.packedSize !== undefined && meta.dataSize !== key.packedSize) return STALE_LAYOUT;
  if (
    key.layout !== undefined &&
    meta.layout !== undefined &&
    !layoutsEqual(meta.layout, key.layout)
  ) {
    return STALE_LAYOUT;
  }
  return HIT;
}

/**
 * Entry names: the kernel name immediately followed by the bias name, no separator
 * (ExecuTorch's naming). The last name built is kept, so a miss's lookUp and the
 * lookUpOrInsert that follows build one string; nothing is retained per entry.
 */
export class EntryNames {
  #kernelName = '';
  #biasName = '';
  #name = '';

  of(kernelName: string, biasName: string): string {
    if (kernelName === this.#kernelName && biasName === this.#biasName) return this.#name;
    this.#kernelName = kernelName;
    this.#biasName = biasName;
    this.#name = kernelName + biasName;
    return this.#name;
  }

  clear(): void {
    this.#kernelName = '';
    this.#biasName = '';
    this.#name = '';
  }
}
