// CRC32C throughput of entry data: the addon's (SSE4.2 or table) and cache-format's
// JavaScript fallback, on one 64 MiB buffer (beyond the last-level cache) and on 4 KiB
// ones (in it). Prints numbers; asserts nothing.
// Run: npx tsx --conditions=memlayer-source bench/crc32c.ts [--runs 7]
import { crc32cOf } from '@memlayer/cache-format';
import { crc32c, crc32cImplementation } from '@memlayer/mmap-native';
import { fill } from './fill.js';

const runsAt = process.argv.indexOf('--runs');
const RUNS = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 7;
const big = new Uint8Array(fill((64 << 20) / 4, 1).buffer);
const small = big.subarray(0, 4096);

function gbPerSecond(crc: (bytes: Uint8Array) => number, bytes: Uint8Array, total: number) {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let done = 0; done < total; done += bytes.length) crc(bytes);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  times.sort((a, b) => a - b);
  return total / (times[times.length >> 1] as number) / 1e9;
}

const native = (bytes: Uint8Array) => crc32c(bytes);
const js = (bytes: Uint8Array) => crc32cOf(bytes);
if (native(big) !== js(big)) throw new Error('native and JavaScript CRC32C differ');
const rows = [
  { name: `addon (${crc32cImplementation()})`, crc: native },
  { name: 'JavaScript (cache-format)', crc: js },
].map(({ name, crc }) => ({
  name,
  large: gbPerSecond(crc, big, big.length),
  tiny: gbPerSecond(crc, small, big.length),
}));
console.log(`CRC32C, median of ${RUNS} runs (GB/s)`);
console.log('implementation              64 MiB   4 KiB');
for (const { name, large, tiny } of rows) {
  console.log(`${name.padEnd(26)} ${large.toFixed(2).padStart(7)} ${tiny.toFixed(2).padStart(7)}`);
}
