import { CRC32C_TABLES as T } from './crc32c-tables.js';

/**
 * CRC32C (Castagnoli) of `bytes` continuing from `previous` (the CRC of the bytes before;
 * 0 to start), slicing by 8: eight table lookups per 8 bytes. Dependency-free: the
 * reference for the addon's hardware CRC and the fallback where there is no addon.
 * No argument checks: crc32cOf is the checked entry point.
 */
export function crc32cUpdate(previous: number, bytes: Uint8Array): number {
  let crc = ~previous;
  const end8 = bytes.length - (bytes.length % 8);
  let i = 0;
  for (; i < end8; i += 8) {
    const lo =
      crc ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    const hi =
      (bytes[i + 4] as number) |
      ((bytes[i + 5] as number) << 8) |
      ((bytes[i + 6] as number) << 16) |
      ((bytes[i + 7] as number) << 24);
    crc =
      (T[1792 + (lo & 0xff)] as number) ^
      (T[1536 + ((lo >>> 8) & 0xff)] as number) ^
      (T[1280 + ((lo >>> 16) & 0xff)] as number) ^
      (T[1024 + (lo >>> 24)] as number) ^
      (T[768 + (hi & 0xff)] as number) ^
      (T[512 + ((hi >>> 8) & 0xff)] as number) ^
      (T[256 + ((hi >>> 16) & 0xff)] as number) ^
      (T[hi >>> 24] as number);
  }
  for (; i < bytes.length; i++) {
    crc = (T[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  }
  return ~crc >>> 0;
}
