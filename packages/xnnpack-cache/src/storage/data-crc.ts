import { crc32cOf } from '@memlayer/cache-format';
import { crc32c, crc32cImplementation } from '@memlayer/mmap-native';

/**
 * CRC32C of packed entry data (megabytes at commit, verify and compact) and of an index read
 * at open (hundreds of kilobytes, which the JavaScript one runs cold in a fresh process): the
 * addon's hardware CRC when the addon is there, else cache-format's JavaScript one. Same
 * values, so the file does not depend on which ran.
 */
export function dataCrc32c(bytes: Uint8Array, previous = 0): number {
  return crc32cImplementation() === null ? crc32cOf(bytes, previous) : crc32c(bytes, previous);
}
