import { crc32cOf } from '@memlayer/cache-format';
import { crc32c, crc32cImplementation } from '@memlayer/mmap-native';

/** CRC32C of entry data: the addon's hardware CRC when there is an addon, else JavaScript's. */
export function dataCrc32c(bytes: Uint8Array, previous = 0): number {
  return crc32cImplementation() === null ? crc32cOf(bytes, previous) : crc32c(bytes, previous);
}
