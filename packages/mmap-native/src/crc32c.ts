import { type NativeAddon, tryLoadAddon } from './backends/posix/addon.js';
import { MmapError } from './errors.js';
import { expectUint8Array, expectUint32 } from './validate.js';

/**
 * How the addon computes CRC32C: the CPU's crc32c instruction (SSE4.2 on x86-64, the CRC32
 * extension on arm64), or a slicing-by-8 table.
 */
export type Crc32cImplementation = 'sse4.2' | 'armv8-crc32' | 'table';

type Crc32cAddon = NativeAddon & Required<Pick<NativeAddon, 'crc32c' | 'crc32cImplementation'>>;

// A missing or broken addon only means "no native CRC": callers then use a JavaScript one.
function crc32cAddon(): Crc32cAddon | null {
  let addon: NativeAddon | null;
  try {
    addon = tryLoadAddon();
  } catch {
    return null;
  }
  return typeof addon?.crc32c === 'function' && typeof addon.crc32cImplementation === 'function'
    ? (addon as Crc32cAddon)
    : null;
}

/**
 * How the addon computes CRC32C here, or null when there is no addon with it (then
 * `crc32c` throws ERR_MMAP_ADDON_NOT_BUILT: use a JavaScript CRC32C, such as
 * @memlayer/cache-format's crc32cOf, which gives the same values).
 */
export function crc32cImplementation(): Crc32cImplementation | null {
  return crc32cAddon()?.crc32cImplementation() ?? null;
}

/**
 * CRC32C (Castagnoli) of `bytes` continuing from `previous` (the CRC of the bytes before;
 * 0 to start), as an unsigned 32-bit number: `crc32c(b, crc32c(a)) === crc32c(a ++ b)`.
 * Computed by the addon, with the CPU's crc32c instruction when it has one.
 */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  expectUint8Array(bytes, 'bytes');
  expectUint32(previous, 'previous');
  const addon = crc32cAddon();
  if (addon === null) {
    throw new MmapError('no native addon with crc32c is available; use a JavaScript CRC32C', {
      code: 'ERR_MMAP_ADDON_NOT_BUILT',
    });
  }
  return addon.crc32c(bytes, previous);
}
