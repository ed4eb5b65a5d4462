// Mapping vs reading a file, measured side by side in one copy: this package's `pnpm bench`
// (map-vs-read.ts) prints it, the private @memlayer/bench suite turns it into report
// figures. Imported by package name so the suite runs it against the build; the
// "./bench/map-vs-read" export is left out of publishConfig and the tarball (dist/bench).
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { type MappedFile, openMappedFile } from '@memlayer/mmap-native';

const PAGE = 4096;

/** The part of mmap-io 1.1.7's API measured here. */
export interface MmapIo {
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

/** mmap-io from `path` (it does not build on Node 20 as published), or why not. */
export function loadMmapIo(path: string | undefined): MmapIo | string {
  if (!path) {
    return 'MMAP_IO_PATH is not set (mmap-io 1.1.7 does not build on Node 20 as published)';
  }
  try {
    return createRequire(import.meta.url)(resolve(path)) as MmapIo;
  } catch (error) {
    return `could not load mmap-io from ${path}: ${(error as Error).message}`;
  }
}

/**
 * mmap-io maps are unmapped only when the GC collects their Buffers: its cycles stop at
 * this count, far below vm.max_map_count (65530 by default), or the process runs out of
 * mappings and V8 itself can no longer allocate.
 */
export const MMAP_IO_MAX_MAPS = 10_000;

export interface MapVsReadOptions {
  /** File to write and measure (it is left in place). */
  path: string;
  size: number;
  repeats: number;
  cycleSeconds: number;
  randomReads: number;
  mmapIo: MmapIo | null;
}

export interface Rate {
  label: string;
  /** Cycles/s, GB/s or reads/s; null when the contender failed (see `error`). */
  value: number | null;
  error?: string;
}

export interface MapVsReadResult {
  /** Map + close of 4 KiB: posix, heap, fs open/read/close (cycles/s). */
  cycles: Rate[];
  /** Every cache line of the whole file (GB/s); the last entry reads without touching. */
  sequential: Rate[];
  /** Page-aligned 4 KiB reads at fixed pseudo-random offsets, copied out (reads/s). */
  random: Rate[];
  /** mmap-io map cycles, no unmap (cycles/s), measured last; null without mmap-io. */
  mmapIoCycles: Rate | null;
}

// Reads one 32-bit word per 64-byte cache line, so every byte is brought in from memory.
function touch(bytes: Uint8Array): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  let sum = 0;
  for (let i = 0; i < words.length; i += 16) sum = (sum + (words[i] ?? 0)) | 0;
  return sum;
}

// A fixed pseudo-random sequence (xorshift), so every contender reads the same pages.
function randomOffsets(count: number, size: number): Float64Array {
  const pages = size / PAGE;
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

const now = () => Number(process.hrtime.bigint()) / 1e9;

function cycles(label: string, seconds: number, once: () => void, max = Infinity): Rate {
  let count = 0;
  const start = now();
  try {
    while (now() - start < seconds && count < max) {
      once();
      count++;
    }
  } catch (error) {
    return {
      label,
      value: null,
      error: `failed after ${count} cycles: ${(error as Error).message}`,
    };
  }
  return { label, value: count / (now() - start) };
}

/** Writes `size` bytes of a fixed pattern, so the file is in the page cache when measured. */
function writeData(path: string, size: number): Uint8Array {
  const chunk = new Uint8Array(1 << 20);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff;
  const writer = openSync(path, 'w');
  for (let at = 0; at < size; at += chunk.length) writeSync(writer, chunk, 0, chunk.length, at);
  closeSync(writer);
  return chunk;
}

/** Writes the file, then measures every contender; checksums of the reads must agree. */
export function measureMapVsRead(options: MapVsReadOptions): MapVsReadResult {
  const { path, size, repeats, cycleSeconds, mmapIo } = options;
  const chunk = writeData(path, size);
  const posix: MappedFile = openMappedFile(path, { mode: 'r', backend: 'posix' });
  const heap: MappedFile = openMappedFile(path, { mode: 'r', backend: 'heap' });
  const fd = openSync(path, 'r');
  try {
    const mapCycles = [
      cycles('posix map + close', cycleSeconds, () => posix.map(0, PAGE).close()),
      cycles('heap map + close', cycleSeconds, () => heap.map(0, PAGE).close()),
      cycles('fs open + read 4 KiB + close', cycleSeconds, () => {
        const handle = openSync(path, 'r');
        readSync(handle, chunk, 0, PAGE, 0);
        closeSync(handle);
      }),
    ];

    const sequential: [string, () => number][] = [
      [
        'posix map + touch + close',
        () => {
          const mapping = posix.map(0, size);
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
          const mapping = heap.map(0, size);
          const sum = touch(mapping.bytes());
          mapping.close();
          return sum;
        },
      ],
    ];
    if (mmapIo) {
      const { PROT_READ, MAP_SHARED, MADV_SEQUENTIAL } = mmapIo;
      sequential.push([
        'mmap-io map + touch',
        () => touch(mmapIo.map(size, PROT_READ, MAP_SHARED, fd, 0, MADV_SEQUENTIAL)),
      ]);
    }
    sequential.push(['fs.readFileSync alone (no touch)', () => readFileSync(path).length & 0]);
    // Round-robin repeats after a JIT warm-up, so no contender pays for warming up touch()
    // or profits from running last.
    for (let i = 0; i < 20; i++) touch(chunk);
    const fastest = sequential.map(() => Number.POSITIVE_INFINITY);
    const checks = new Set<number>();
    for (let round = 0; round < repeats; round++) {
      sequential.forEach(([, run], index) => {
        const start = now();
        const check = run();
        if (index !== sequential.length - 1) checks.add(check);
        fastest[index] = Math.min(fastest[index] ?? Number.POSITIVE_INFINITY, now() - start);
      });
    }
    if (checks.size !== 1) throw new Error(`checksums differ: ${[...checks].join(', ')}`);

    const offsets = randomOffsets(options.randomReads, size);
    const scratch = new Uint8Array(PAGE);
    const randomRate = (label: string, read: (offset: number) => void): Rate => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < repeats; round++) {
        const start = now();
        for (const offset of offsets) read(offset);
        best = Math.min(best, now() - start);
      }
      return { label, value: options.randomReads / best };
    };
    const whole = posix.map(0, size);
    whole.advise('random');
    const wholeBytes = whole.bytes();
    const random = [
      randomRate('posix map (one mapping)', (o) => scratch.set(wholeBytes.subarray(o, o + PAGE))),
      randomRate('fs.readSync', (o) => readSync(fd, scratch, 0, PAGE, o)),
    ];
    if (mmapIo) {
      const buffer = mmapIo.map(size, mmapIo.PROT_READ, mmapIo.MAP_SHARED, fd, 0);
      random.push(
        randomRate('mmap-io map (one mapping)', (o) => scratch.set(buffer.subarray(o, o + PAGE))),
      );
    }
    whole.close();

    // Last, because it can exhaust vm.max_map_count for the whole process: mmap-io has no
    // unmap, its mappings live until the GC happens to collect their Buffers.
    const mmapIoCycles = mmapIo
      ? cycles(
          'mmap-io map (no close: unmapped by GC only)',
          cycleSeconds,
          () => void mmapIo.map(PAGE, mmapIo.PROT_READ, mmapIo.MAP_SHARED, fd, 0),
          MMAP_IO_MAX_MAPS,
        )
      : null;
    return {
      cycles: mapCycles,
      sequential: sequential.map(([label], index) => ({
        label,
        value: size / 1e9 / (fastest[index] ?? Number.NaN),
      })),
      random,
      mmapIoCycles,
    };
  } finally {
    closeSync(fd);
    posix.close();
    heap.close();
  }
}
