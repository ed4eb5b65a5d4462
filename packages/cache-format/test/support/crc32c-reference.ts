// CRC32C written independently of src/ (a table built here, one byte at a time), for test
// writers that must not share the code they test.
const TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  return crc;
});

export function crc32c(bytes: Uint8Array, previous = 0): number {
  let crc = ~previous;
  for (const byte of bytes) crc = (TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}
