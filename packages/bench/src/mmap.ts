import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { openMappedFile } from '@memlayer/mmap-native';
import { MiB, nowMs } from './measure.js';
import {
  type BenchOptions,
  type Comparison,
  compare,
  type Figure,
  type SectionBody,
} from './types.js';

const PAGE = 4096;

/** The part of mmap-io 1.1.7's API measured here. */
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

/** mmap-io from MMAP_IO_PATH (it does not build on Node 20 as published), or why not. */
function loadMmapIo(): MmapIo | string {
  const path = process.env['MMAP_IO_PATH'];
  if (!path)
    return 'MMAP_IO_PATH is not set (mmap-io 1.1.7 does not build on Node 20 as published)';
  try {
    return createRequire(import.meta.url)(resolve(path)) as MmapIo;
  } catch (error) {
    return `could not load mmap-io from ${path}: ${(error as Error).message}`;
  }
}

// Reads one 32-bit word per 64-byte cache line, so every byte is brought in from memory.
function touch(bytes: Uint8Array): number {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  let sum = 0;
  for (let i = 0; i < words.length; i += 16) sum = (sum + (words[i] ?? 0)) | 0;
  return sum;
}

/**
 * mmap-io maps are unmapped only when the GC collects their Buffers: its cycles stop at
 * this count, far below vm.max_map_count (65530 by default), or the process runs out of
 * mappings and V8 itself can no longer allocate.
 */
const MMAP_IO_MAX_MAPS = 10_000;

function cyclesPerSecond(
  seconds: number,
  once: () => void,
  maxCycles = Number.POSITIVE_INFINITY,
): number {
  let count = 0;
  const start = nowMs();
  while (nowMs() - start < seconds * 1000 && count < maxCycles) {
    once();
    count++;
  }
  return count / ((nowMs() - start) / 1000);
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

export async function mmapSection(options: BenchOptions): Promise<SectionBody> {
  const size = (options.quick ? 32 : 256) * MiB;
  const repeats = options.quick ? 2 : 5;
  const cycleSeconds = options.quick ? 0.3 : 1;
  const randomReads = options.quick ? 10_000 : 50_000;
  const path = join(options.workDir, 'mmap-data.bin');
  options.progress(`mmap: writing a ${size / MiB} MiB file`);
  const chunk = new Uint8Array(MiB);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff;
  const writer = openSync(path, 'w');
  for (let at = 0; at < size; at += chunk.length) writeSync(writer, chunk, 0, chunk.length, at);
  closeSync(writer);
  const mmapIo = loadMmapIo();
  const io = typeof mmapIo === 'string' ? null : mmapIo;
  const file = openMappedFile(path, { mode: 'r', backend: 'posix' });
  const fd = openSync(path, 'r');
  const figures: Figure[] = [];
  const comparisons: Comparison[] = [];
  try {
    options.progress('mmap: map/close cycles');
    const cycleMethod = `as many cycles as fit in ${cycleSeconds} s, 4 KiB at offset 0 of a warm file`;
    const ours = cyclesPerSecond(cycleSeconds, () => file.map(0, PAGE).close());
    const fsCycles = cyclesPerSecond(cycleSeconds, () => {
      const handle = openSync(path, 'r');
      readSync(handle, chunk, 0, PAGE, 0);
      closeSync(handle);
    });
    figures.push(
      {
        label: 'mmap-native map + close (4 KiB)',
        value: ours,
        unit: 'cycles/s',
        method: cycleMethod,
      },
      {
        label: 'fs open + read 4 KiB + close',
        value: fsCycles,
        unit: 'cycles/s',
        method: cycleMethod,
      },
    );
    comparisons.push(
      compare({
        label: 'map/close cycles vs fs open/read/close',
        ours: { name: 'mmap-native', value: ours },
        peer: { name: 'node:fs', value: fsCycles },
        unit: 'cycles/s',
        higherIsBetter: true,
        method: cycleMethod,
        main: true,
      }),
    );

    options.progress('mmap: sequential reads');
    const contenders: Array<[string, () => number]> = [
      [
        'mmap-native map + touch + close',
        () => {
          const mapping = file.map(0, size);
          mapping.advise('sequential');
          const sum = touch(mapping.bytes());
          mapping.close();
          return sum;
        },
      ],
      ['fs.readFileSync + touch', () => touch(readFileSync(path))],
    ];
    if (io) {
      contenders.push([
        'mmap-io map + touch',
        () => touch(io.map(size, io.PROT_READ, io.MAP_SHARED, fd, 0, io.MADV_SEQUENTIAL)),
      ]);
    }
    for (let i = 0; i < 20; i++) touch(chunk); // JIT warm-up, so no contender pays for it
    const fastest = contenders.map(() => Number.POSITIVE_INFINITY);
    const checks = new Set<number>();
    for (let round = 0; round < repeats; round++) {
      contenders.forEach(([, run], index) => {
        const start = nowMs();
        checks.add(run());
        fastest[index] = Math.min(fastest[index] ?? Number.POSITIVE_INFINITY, nowMs() - start);
      });
    }
    if (checks.size !== 1)
      throw new Error(`sequential read checksums differ: ${[...checks].join(', ')}`);
    const seqMethod = `${size / MiB} MiB file in the page cache, every 64-byte line read once; best of ${repeats} round-robin rounds`;
    const seq = contenders.map(([label], index) => ({
      label,
      gbps: size / 1e9 / ((fastest[index] ?? Number.NaN) / 1000),
    }));
    for (const { label, gbps } of seq)
      figures.push({ label: `sequential: ${label}`, value: gbps, unit: 'GB/s', method: seqMethod });
    const seqOurs = seq[0]?.gbps ?? Number.NaN;
    comparisons.push(
      compare({
        label: 'sequential read vs fs.readFileSync',
        ours: { name: 'mmap-native', value: seqOurs },
        peer: { name: 'fs.readFileSync', value: seq[1]?.gbps ?? Number.NaN },
        unit: 'GB/s',
        higherIsBetter: true,
        method: seqMethod,
        main: true,
      }),
    );
    if (io) {
      comparisons.push(
        compare({
          label: 'sequential read vs mmap-io',
          ours: { name: 'mmap-native', value: seqOurs },
          peer: { name: 'mmap-io', value: seq[2]?.gbps ?? Number.NaN },
          unit: 'GB/s',
          higherIsBetter: true,
          method: seqMethod,
        }),
      );
    }

    options.progress('mmap: random reads');
    const offsets = randomOffsets(randomReads, size);
    const scratch = new Uint8Array(PAGE);
    const randomRate = (read: (offset: number) => void) => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < repeats; round++) {
        const start = nowMs();
        for (const offset of offsets) read(offset);
        best = Math.min(best, nowMs() - start);
      }
      return randomReads / (best / 1000);
    };
    const whole = file.map(0, size);
    whole.advise('random');
    const wholeBytes = whole.bytes();
    const randOurs = randomRate((o) => scratch.set(wholeBytes.subarray(o, o + PAGE)));
    const randFs = randomRate((o) => readSync(fd, scratch, 0, PAGE, o));
    let randIo: number | null = null;
    if (io) {
      const buffer = io.map(size, io.PROT_READ, io.MAP_SHARED, fd, 0);
      randIo = randomRate((o) => scratch.set(buffer.subarray(o, o + PAGE)));
    }
    whole.close();
    const randMethod = `${randomReads} page-aligned 4 KiB reads at fixed pseudo-random offsets, copied out; best of ${repeats}`;
    figures.push(
      {
        label: 'random: mmap-native (one mapping)',
        value: randOurs,
        unit: 'reads/s',
        method: randMethod,
      },
      { label: 'random: fs.readSync', value: randFs, unit: 'reads/s', method: randMethod },
    );
    comparisons.push(
      compare({
        label: 'random 4 KiB reads vs fs.readSync',
        ours: { name: 'mmap-native', value: randOurs },
        peer: { name: 'fs.readSync', value: randFs },
        unit: 'reads/s',
        higherIsBetter: true,
        method: randMethod,
        main: true,
      }),
    );
    if (io && randIo !== null) {
      figures.push({
        label: 'random: mmap-io (one mapping)',
        value: randIo,
        unit: 'reads/s',
        method: randMethod,
      });
      comparisons.push(
        compare({
          label: 'random 4 KiB reads vs mmap-io',
          ours: { name: 'mmap-native', value: randOurs },
          peer: { name: 'mmap-io', value: randIo },
          unit: 'reads/s',
          higherIsBetter: true,
          method: randMethod,
        }),
      );
      // Last: mmap-io has no unmap, its mappings live until the GC collects their Buffers.
      options.progress('mmap: mmap-io map cycles');
      const ioCycles = cyclesPerSecond(
        cycleSeconds,
        () => {
          io.map(PAGE, io.PROT_READ, io.MAP_SHARED, fd, 0);
        },
        MMAP_IO_MAX_MAPS,
      );
      const ioMethod = `${cycleMethod}, stopped after ${MMAP_IO_MAX_MAPS} maps (mmap-io cannot unmap: more would exhaust vm.max_map_count)`;
      figures.push({
        label: 'mmap-io map (4 KiB, no close: unmapped by GC only)',
        value: ioCycles,
        unit: 'cycles/s',
        method: ioMethod,
      });
      comparisons.push(
        compare({
          label: 'map/close cycles vs mmap-io map (no close)',
          ours: { name: 'mmap-native map + close', value: ours },
          peer: { name: 'mmap-io map', value: ioCycles },
          unit: 'cycles/s',
          higherIsBetter: true,
          method: ioMethod,
        }),
      );
    }
  } finally {
    closeSync(fd);
    file.close();
  }
  return {
    figures,
    comparisons,
    notes: [
      typeof mmapIo === 'string'
        ? `mmap-io not measured: ${mmapIo}.`
        : `mmap-io 1.1.7 loaded from MMAP_IO_PATH=${process.env['MMAP_IO_PATH']} (a locally patched build).`,
    ],
  };
}
