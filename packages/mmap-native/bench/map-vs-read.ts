// Side-by-side numbers in one run: mapping vs reading a file.
//   pnpm --filter @memlayer/mmap-native bench
// Env: BENCH_SIZE_MB (default 256), MMAP_IO_PATH (a built mmap-io package, optional).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMmapIo, measureMapVsRead, type Rate } from './map-vs-read-section.js';

const { BENCH_SIZE_MB, MMAP_IO_PATH } = process.env;
const SIZE = Number(BENCH_SIZE_MB ?? 256) * 1024 * 1024;
const REPEATS = 5;

function print(rate: Rate, unit: string, scale = 1, digits = 0): void {
  const value =
    rate.value === null ? rate.error : (rate.value / scale).toFixed(digits).padStart(10);
  console.log(`  ${rate.label.padEnd(34)} ${value} ${rate.value === null ? '' : unit}`);
}

const dir = mkdtempSync(join(tmpdir(), 'mmap-native-bench-'));
try {
  const loaded = loadMmapIo(MMAP_IO_PATH);
  const mmapIo = typeof loaded === 'string' ? null : loaded;
  console.log(
    `file: ${SIZE / 2 ** 20} MiB in ${dir} (page cache warm: written just before)` +
      `; mmap-io: ${mmapIo ? MMAP_IO_PATH : `not loaded (${loaded})`}`,
  );
  const result = measureMapVsRead({
    path: join(dir, 'data.bin'),
    size: SIZE,
    repeats: REPEATS,
    cycleSeconds: 1,
    randomReads: 50_000,
    mmapIo,
  });
  console.log('\nmap + close of 4 KiB');
  for (const rate of result.cycles) print(rate, 'cycles/s');
  console.log(
    `\nsequential read of ${SIZE / 2 ** 20} MiB (touch every cache line), best of ${REPEATS}`,
  );
  for (const rate of result.sequential) print(rate, 'GB/s', 1, 2);
  console.log(`\nrandom 4 KiB reads (50000 page-aligned, copied out), best of ${REPEATS}`);
  for (const rate of result.random) print(rate, 'k reads/s', 1e3);
  if (result.mmapIoCycles) {
    console.log('\nmap of 4 KiB, mmap-io (no close: unmapped by GC only), measured last');
    print(result.mmapIoCycles, 'cycles/s');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
