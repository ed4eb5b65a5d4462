import { join } from 'node:path';
import {
  loadMmapIo,
  MMAP_IO_MAX_MAPS,
  measureMapVsRead,
  type Rate,
} from '@memlayer/mmap-native/bench/map-vs-read';
import { MiB } from './measure.js';
import {
  type BenchOptions,
  type Comparison,
  compare,
  type Figure,
  type SectionBody,
} from './types.js';

/** The package benchmark's measurement (@memlayer/mmap-native/bench/map-vs-read) as figures. */
export async function mmapSection(options: BenchOptions): Promise<SectionBody> {
  const size = (options.quick ? 32 : 256) * MiB;
  const repeats = options.quick ? 2 : 5;
  const cycleSeconds = options.quick ? 0.3 : 1;
  const randomReads = options.quick ? 10_000 : 50_000;
  const mmapIo = loadMmapIo(process.env['MMAP_IO_PATH']);
  const io = typeof mmapIo === 'string' ? null : mmapIo;
  options.progress(`mmap: ${size / MiB} MiB file, map/close cycles, sequential and random reads`);
  const result = measureMapVsRead({
    path: join(options.workDir, 'mmap-data.bin'),
    size,
    repeats,
    cycleSeconds,
    randomReads,
    mmapIo: io,
  });

  const cycleMethod = `as many cycles as fit in ${cycleSeconds} s, 4 KiB at offset 0 of a warm file`;
  const seqMethod = `${size / MiB} MiB file in the page cache, every 64-byte line read once; best of ${repeats} round-robin rounds`;
  const randMethod = `${randomReads} page-aligned 4 KiB reads at fixed pseudo-random offsets, copied out; best of ${repeats}`;
  const ioMethod = `${cycleMethod}, stopped after ${MMAP_IO_MAX_MAPS} maps (mmap-io cannot unmap: more would exhaust vm.max_map_count)`;
  const figures: Figure[] = [];
  const figure = (prefix: string, rate: Rate, unit: string, method: string) =>
    figures.push({
      label: `${prefix}${rate.label}`,
      value: rate.value,
      unit,
      method: rate.error ? `${method}; ${rate.error}` : method,
    });
  for (const rate of result.cycles) figure('', rate, 'cycles/s', cycleMethod);
  for (const rate of result.sequential) figure('sequential: ', rate, 'GB/s', seqMethod);
  for (const rate of result.random) figure('random: ', rate, 'reads/s', randMethod);
  if (result.mmapIoCycles) figure('', result.mmapIoCycles, 'cycles/s', ioMethod);

  const value = (rates: Rate[], label: string) =>
    rates.find((rate) => rate.label === label)?.value ?? Number.NaN;
  const ours = {
    'cycles/s': value(result.cycles, 'posix map + close'),
    'GB/s': value(result.sequential, 'posix map + touch + close'),
    'reads/s': value(result.random, 'posix map (one mapping)'),
  };
  // [label, peer name, peer value, unit, method, main]; memlayer's side is `ours[unit]`.
  const pairs: [string, string, number, keyof typeof ours, string, boolean][] = [
    [
      'map/close cycles vs fs open/read/close',
      'node:fs',
      value(result.cycles, 'fs open + read 4 KiB + close'),
      'cycles/s',
      cycleMethod,
      true,
    ],
    [
      'sequential read vs fs.readFileSync',
      'fs.readFileSync',
      value(result.sequential, 'fs.readFileSync + touch'),
      'GB/s',
      seqMethod,
      true,
    ],
    [
      'random 4 KiB reads vs fs.readSync',
      'fs.readSync',
      value(result.random, 'fs.readSync'),
      'reads/s',
      randMethod,
      true,
    ],
  ];
  if (io) {
    pairs.push(
      [
        'sequential read vs mmap-io',
        'mmap-io',
        value(result.sequential, 'mmap-io map + touch'),
        'GB/s',
        seqMethod,
        false,
      ],
      [
        'random 4 KiB reads vs mmap-io',
        'mmap-io',
        value(result.random, 'mmap-io map (one mapping)'),
        'reads/s',
        randMethod,
        false,
      ],
      [
        'map/close cycles vs mmap-io map (no close)',
        'mmap-io map',
        result.mmapIoCycles?.value ?? Number.NaN,
        'cycles/s',
        ioMethod,
        false,
      ],
    );
  }
  const comparisons: Comparison[] = pairs.map(([label, peer, peerValue, unit, method, main]) =>
    compare({
      label,
      ours: { name: 'mmap-native', value: ours[unit] },
      peer: { name: peer, value: peerValue },
      unit,
      higherIsBetter: true,
      method,
      main,
    }),
  );
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
