// Memory budget of the decoders: what a decoded trailer keeps alive is at most
// DECODE_BYTES_PER_INPUT_BYTE times the bytes the decoder was given (plus a fixed allowance),
// whatever the input. Measured with the V8 heap after a full GC, on the inputs that pack the
// most decoded objects into the fewest bytes; and checked structurally on every fuzz case.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeTrailer,
  encodeTrailer,
  readTrailer,
  type Trailer,
  V2_ENTRY_FIXED_SIZE,
  V3_ENTRY_FIXED_SIZE,
  XpwcFormatError,
} from '../src/index.js';
import { buildCorpus, MUTATIONS, mutate, Rng } from './support/fuzz-kit.js';
import { ByteWriter } from './support/raw.js';

/** The stated budget (README, "Limits"): retained bytes per input byte. */
const DECODE_BYTES_PER_INPUT_BYTE = 8;
/** Fixed allowance for the measurement itself (V8 bookkeeping, one-off caches). */
const FIXED_ALLOWANCE = 256 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapNow(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Bytes that `make()`'s result keeps alive (heap + array buffers, after full GCs). Vitest runs
 * each test file in its own process (the default `forks` pool), so nothing else allocates here.
 */
function retainedBy(make: () => unknown): number {
  const before = heapNow();
  const result = make();
  const after = heapNow();
  // Keep `result` reachable until after the second measurement.
  if (result === Symbol.for('never')) throw new Error('unreachable');
  return after - before;
}

function withinBudget(retained: number, inputBytes: number): boolean {
  return retained <= DECODE_BYTES_PER_INPUT_BYTE * inputBytes + FIXED_ALLOWANCE;
}

const N = 60_000;

/** v2 file with N entries of `nameBytes` names; u32/u64 values large enough to be heap numbers. */
function denseV2(name: number[]): Uint8Array {
  const indexStart = 2 ** 40;
  const w = new ByteWriter();
  for (let i = 0; i < N; i++) {
    w.u32(name.length)
      .bytes(name)
      .u64(indexStart - 2 ** 33 - i)
      .u64(2 ** 32 + i)
      .u32(0xf000_0000 + i);
  }
  w.u64(indexStart).u32(N).u32(0x58505743).u32(2);
  return w.toBytes();
}

function denseV3WithLayouts(): { bytes: Uint8Array; end: number } {
  const indexStart = 2 ** 40;
  const big = (i: number) => 0x8000_0000 + i;
  const entries = Array.from({ length: N }, (_, i) => ({
    name: '',
    fileOffset: 2 ** 35 + i,
    dataSize: 2 ** 33 + i,
    seed: big(i),
    fingerprint: big(i + 1),
    crc32c: big(i + 2),
    layout: {
      operatorType: big(i + 3),
      outputChannels: big(i + 4),
      inputChannels: big(i + 5),
      nr: big(i + 6),
      kr: big(i + 7),
      sr: big(i + 8),
      extraBytes: big(i + 9),
      flags: big(i + 10),
    },
  }));
  const bytes = encodeTrailer(entries, { indexStart, identity: 'x'.repeat(1024) });
  return { bytes, end: indexStart + bytes.length };
}

describe('decoder memory budget', () => {
  const cases: Array<[string, () => { bytes: Uint8Array; end: number; lenient?: boolean }]> = [
    ['v2, empty names', () => ({ bytes: denseV2([]), end: 2 ** 40 + denseV2([]).length })],
    [
      'v2, 1-byte names that are not UTF-8',
      () => {
        const bytes = denseV2([0xff]);
        return { bytes, end: 2 ** 40 + bytes.length };
      },
    ],
    [
      'v2, 16 KiB names of 0xff (two-byte strings)',
      () => {
        const name = new Array<number>(16 * 1024).fill(0xff);
        const w = new ByteWriter();
        for (let i = 0; i < 64; i++) w.u32(name.length).bytes(name).u64(0).u64(1).u32(i);
        w.u64(4096).u32(64).u32(0x58505743).u32(2);
        const index = w.toBytes();
        return { bytes: index, end: 4096 + index.length };
      },
    ],
    [
      'v2 lenient, short index',
      () => {
        const bytes = denseV2([]);
        new DataView(bytes.buffer).setUint32(bytes.length - 12, N + 1000, true);
        return { bytes, end: 2 ** 40 + bytes.length, lenient: true };
      },
    ],
    ['v3, empty names, every entry with a layout', denseV3WithLayouts],
  ];

  it.each(cases)('%s: retained <= 8 x input bytes', (_label, build) => {
    const { bytes, end, lenient } = build();
    let trailer: Trailer | undefined;
    const retained = retainedBy(() => {
      trailer = decodeTrailer(bytes, end, { lenient: lenient === true });
      // The most a trailer keeps: its columns and the entries made from them when read.
      expect(trailer.entries.length).toBe(trailer.columns.length);
      return trailer;
    });
    expect(trailer?.entries.length).toBeGreaterThan(0);
    const ratio = retained / bytes.length;
    console.log(
      `${_label}: ${bytes.length} input bytes, ${retained} retained (${ratio.toFixed(2)} x)`,
    );
    expect(withinBudget(retained, bytes.length)).toBe(true);
  });

  it('the measurement catches a decoder that keeps 20 x its input', () => {
    const input = new Uint8Array(4 * 1024 * 1024);
    const retained = retainedBy(() =>
      Array.from({ length: (20 * input.length) / 64 }, (_, i) => ({ a: i + 0.5, b: i, c: i })),
    );
    expect(withinBudget(retained, input.length)).toBe(false);
  });

  it('every fuzz case: entries and name characters are bounded by the bytes that hold them', () => {
    const corpus = buildCorpus();
    fc.assert(
      fc.property(
        fc.nat({ max: corpus.length - 1 }),
        fc.constantFrom(...MUTATIONS),
        fc.integer(),
        fc.boolean(),
        (sampleIndex, kind, seed, lenient) => {
          const bytes = mutate(corpus[sampleIndex] as (typeof corpus)[number], new Rng(seed), kind);
          let trailer: Trailer;
          try {
            trailer = readTrailer(bytes, bytes.length, { lenient }).trailer;
          } catch (e) {
            if (e instanceof XpwcFormatError) return;
            throw e;
          }
          const trailerBytes = trailer.trailerEnd - trailer.indexStart;
          const minEntry = trailer.version === 2 ? V2_ENTRY_FIXED_SIZE : V3_ENTRY_FIXED_SIZE;
          expect(trailer.entries.length * minEntry).toBeLessThanOrEqual(trailerBytes);
          const chars = trailer.entries.reduce((n, e) => n + e.name.length, 0);
          // One UTF-16 code unit per name byte at most (escapes included).
          expect(chars).toBeLessThanOrEqual(trailerBytes);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
