// Side-by-side numbers in one run: mapping vs reading a file.
//   pnpm --filter @memlayer/mmap-native bench
// Env: BENCH_SIZE_MB (default 256), MMAP_IO_PATH (a built mmap-io package, optional).
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BackendName, type MappedFile, openMappedFile } from '../src/index.js';

const { BENCH_SIZE_MB, MMAP_IO_PATH } = process.env;
const SIZE = Number(BENCH_SIZE_MB ?? 256) * 1024 * 1024;
const PAGE = 4096;
const CYCLE_SECONDS = 1;
const RANDOM_READS = 50_000;
const REPEATS = 5;

interface MmapIo {
  PROT_READ: number;
  MAP_SHARED: number;
  MADV_SEQUENTIAL: number;
  map(
    size: number,
    protection: number,
    flags: number,
    fd: number,
    offset?: number,
    advise?: number,
  ): Buffer;
}

async function loadMmapIo(): Promise<MmapIo | null> {
  const path = MMAP_IO_PATH;
  if (!path) return null;
  const entry = createRequire(import.meta.url).resolve(resolve(path));
  const module = (await import(pathToFileURL(entry).href)) as { default: MmapIo };
  return module.default;
}

const now = () => Number(process.hrtime.bigint()) / 1e9;

// Reads one 32-bit word per 64-byte cache line, so every byte is brought in from memory.
function touch(bytes: Uint8Array): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  let sum = 0;
  for (let i = 0; i < words.length; i += 16) sum = (sum + (words[i] ?? 0)) | 0;
  return sum;
}

function best(run: () => number): { seconds: number; check: number } {
  let seconds = Number.POSITIVE_INFINITY;
  let check = 0;
  for (let i = 0; i < REPEATS; i++) {
    const start = now();
    check = run();
    seconds = Math.min(seconds, now() - start);
  }
  return { seconds, check };
}

function cycles(label: string, once: () => void): void {
  let count = 0;
  const start = now();
  try {
    while (now() - start < CYCLE_SECONDS) {
      once();
      count++;
    }
  } catch (error) {
    console.log(`  ${label.padEnd(34)} failed after ${count} cycles: ${(error as Error).message}`);
    return;
  }
  const rate = count / (now() - start);
  console.log(`  ${label.padEnd(34)} ${rate.toFixed(0).padStart(10)} cycles/s`);
}

function rate(label: string, bytes: number, seconds: number): void {
  console.log(`  ${label.padEnd(34)} ${(bytes / seconds / 1e9).toFixed(2).padStart(10)} GB/s`);
}

// A fixed pseudo-random sequence (xorshift), so every contender reads the same pages.
function randomOffsets(count: number): Float64Array {
  const pages = SIZE / PAGE;
  const out = new Float64Array(count);
  let x = 0x9e3779b9;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = ((x >>> 0) % pages) * PAGE;
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'mmap-native-bench-'));
const path = join(dir, 'data.bin');
try {
  const mmapIo = await loadMmapIo();
  console.log(
    `file: ${SIZE / 2 ** 20} MiB in ${dir} (page cache warm: written just before)` +
      `; mmap-io: ${mmapIo ? MMAP_IO_PATH : 'not loaded (set MMAP_IO_PATH)'}`,
  );
  const chunk = new Uint8Array(1 << 20);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff;
  const writer = openSync(path, 'w');
  for (let at = 0; at < SIZE; at += chunk.length) writeSync(writer, chunk, 0, chunk.length, at);
  closeSync(writer);

  const files: Record<BackendName, MappedFile> = {
    posix: openMappedFile(path, { mode: 'r', backend: 'posix' }),
    heap: openMappedFile(path, { mode: 'r', backend: 'heap' }),
  };
  const fd = openSync(path, 'r');

  console.log('\nmap + close of 4 KiB');
  cycles('posix map + close', () => files.posix.map(0, PAGE).close());
  cycles('heap map + close', () => files.heap.map(0, PAGE).close());
  if (mmapIo) console.log('  (mmap-io: measured last, see the end)');

  console.log(
    `\nsequential read of ${SIZE / 2 ** 20} MiB (touch every cache line), best of ${REPEATS}`,
  );
  const checks = new Set<number>();
  const sequential: [string, () => number][] = [
    [
      'posix map + touch + close',
      () => {
        const mapping = files.posix.map(0, SIZE);
        mapping.advise('sequential');
        const sum = touch(mapping.bytes());
        mapping.close();
        return sum;
      },
    ],
    ['fs.readFileSync + touch', () => touch(readFileSync(path))],
    [
      'heap map + touch + close',
      () => {
        const mapping = files.heap.map(0, SIZE);
        const sum = touch(mapping.bytes());
        mapping.close();
        return sum;
      },
    ],
  ];
  if (mmapIo) {
    sequential.push([
      'mmap-io map + touch',
      () =>
        touch(mmapIo.map(SIZE, mmapIo.PROT_READ, mmapIo.MAP_SHARED, fd, 0, mmapIo.MADV_SEQUENTIAL)),
    ]);
  }
  sequential.push(['fs.readFileSync alone (no touch)', () => readFileSync(path).length & 0]);
  // Round-robin repeats after a JIT warm-up, so no contender pays for warming up touch()
  // or profits from running last.
  for (let i = 0; i < 20; i++) touch(chunk);
  const fastest = sequential.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < REPEATS; round++) {
    sequential.forEach(([, run], index) => {
      const start = now();
      const check = run();
      if (index !== sequential.length - 1) checks.add(check);
      fastest[index] = Math.min(fastest[index] ?? Number.POSITIVE_INFINITY, now() - start);
    });
  }
  for (const [index, [label]] of sequential.entries()) {
    rate(label, SIZE, fastest[index] ?? Number.NaN);
  }
  if (checks.size !== 1) throw new Error(`checksums differ: ${[...checks].join(', ')}`);

  console.log(
    `\nrandom 4 KiB reads (${RANDOM_READS} page-aligned, copied out), best of ${REPEATS}`,
  );
  const offsets = randomOffsets(RANDOM_READS);
  const scratch = new Uint8Array(PAGE);
  const randomRate = (label: string, read: (offset: number) => void) => {
    const { seconds } = best(() => {
      for (const offset of offsets) read(offset);
      return 0;
    });
    console.log(
      `  ${label.padEnd(34)} ${(RANDOM_READS / seconds / 1e3).toFixed(0).padStart(10)} k reads/s`,
    );
  };
  const whole = files.posix.map(0, SIZE);
  whole.advise('random');
  const wholeBytes = whole.bytes();
  randomRate('posix map (one mapping)', (o) => scratch.set(wholeBytes.subarray(o, o + PAGE)));
  randomRate('fs.readSync', (o) => readSync(fd, scratch, 0, PAGE, o));
  if (mmapIo) {
    const buffer = mmapIo.map(SIZE, mmapIo.PROT_READ, mmapIo.MAP_SHARED, fd, 0);
    randomRate('mmap-io map (one mapping)', (o) => scratch.set(buffer.subarray(o, o + PAGE)));
  }
  whole.close();

  if (mmapIo) {
    // Last, because it can exhaust vm.max_map_count for the whole process: mmap-io has no
    // unmap, its mappings live until the GC happens to collect their Buffers.
    console.log('\nmap of 4 KiB, mmap-io (no close: unmapped by GC only)');
    cycles('mmap-io map', () => {
      mmapIo.map(PAGE, mmapIo.PROT_READ, mmapIo.MAP_SHARED, fd, 0);
    });
  }

  closeSync(fd);
  files.posix.close();
  files.heap.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
