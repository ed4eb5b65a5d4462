// Shared by test/fuzz.test.ts (a few thousand cases) and scripts/fuzz.ts (long runs):
// a corpus of valid files, mutations of them, and the set of API calls every case exercises.

import {
  COMMIT_SLOT_OFFSETS,
  decodeCommitSlot,
  decodeHeader,
  decodeTrailer,
  encodeTrailer,
  entriesByName,
  findDuplicateNames,
  lintTrailer,
  MAX_ENTRY_COUNT,
  MAX_IDENTITY_LENGTH,
  MAX_NAME_LENGTH,
  nameToBytes,
  readCommittedTrailer,
  readFooter,
  readTrailer,
  type Trailer,
  trailerHistory,
  V3_HEADER_READ_SIZE,
  verifyEntryData,
  XpwcFormatError,
} from '../../src/index.js';
import { crc32c } from './crc32c-reference.js';
import { rawV2File } from './raw.js';
import { applyWrites, bytesOf, commit, IDENTITY, MemFile, planCommitWrites } from './writer.js';

/** xorshift128-based PRNG: fast, seedable, good enough for fuzzing. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = seed >>> 0 || 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = 0x12345678;
    for (let i = 0; i < 16; i++) this.u32();
  }

  u32(): number {
    let t = this.d;
    const s = this.a;
    this.d = this.c;
    this.c = this.b;
    this.b = s;
    t ^= t << 11;
    t ^= t >>> 8;
    this.a = (t ^ s ^ (s >>> 19)) >>> 0;
    return this.a;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.u32() / 0x1_0000_0000) * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

export interface Sample {
  readonly label: string;
  readonly bytes: Uint8Array;
  /** Offsets of u32 length/count fields, for inflation. */
  readonly u32Fields: readonly number[];
  /** Offsets of u64 offset/size fields, for inflation. */
  readonly u64Fields: readonly number[];
}

function fieldsOf(bytes: Uint8Array): { u32Fields: number[]; u64Fields: number[] } {
  const u32Fields: number[] = [];
  const u64Fields: number[] = [];
  let trailer: Trailer;
  try {
    trailer = readTrailer(bytes, bytes.length).trailer;
  } catch {
    return { u32Fields, u64Fields };
  }
  const end = trailer.trailerEnd;
  let p = trailer.indexStart;
  const layoutBytes = trailer.version === 3 && trailer.flags & 1 ? 32 : 0;
  const after = trailer.version === 2 ? 20 : 28 + layoutBytes;
  for (const e of trailer.entries) {
    u32Fields.push(p);
    if (layoutBytes > 0) u32Fields.push(p + 4 + nameToBytes(e.name).length + 28 + 4);
    p += 4 + nameToBytes(e.name).length;
    u64Fields.push(p, p + 8);
    p += after;
  }
  if (trailer.version === 2) {
    u64Fields.push(end - 20);
    u32Fields.push(end - 12);
  } else {
    const f = end - 56;
    u64Fields.push(f, f + 16, f + 24, f + 32);
    u32Fields.push(f + 8, f + 12, f + 40);
    for (const s of COMMIT_SLOT_OFFSETS) {
      u64Fields.push(s, s + 8);
      u32Fields.push(s + 16, s + 24);
    }
    u32Fields.push(8, 12);
  }
  return { u32Fields, u64Fields };
}

function sample(label: string, bytes: Uint8Array): Sample {
  return { label, bytes, ...fieldsOf(bytes) };
}

/** Valid (and a few deliberately stale/torn) files to mutate. */
export function buildCorpus(): Sample[] {
  const out: Sample[] = [];
  out.push(
    sample(
      'v2-small',
      rawV2File({
        dataLength: 8192,
        entries: [
          { name: 'fc1.weight', fileOffset: 0, dataSize: 100, seed: 1 },
          { name: 'fc1.weightfc1.bias', fileOffset: 4096, dataSize: 4000, seed: 2 },
          { name: 'émbed', fileOffset: 4096, dataSize: 0, seed: 3 },
        ],
      }),
    ),
  );
  const many = Array.from({ length: 40 }, (_, i) => ({
    name: `layers.${i}.w`,
    fileOffset: i * 64,
    dataSize: 64,
    seed: i,
  }));
  const v2Trailer = encodeTrailer(many, { version: 2, indexStart: 4096 });
  const v2Many = new Uint8Array(4096 + v2Trailer.length);
  v2Many.set(v2Trailer, 4096);
  out.push(sample('v2-many', v2Many));
  out.push(
    sample(
      'v1',
      rawV2File({
        version: 1,
        dataLength: 4096,
        entries: [{ name: 'old', fileOffset: 0, dataSize: 10 }],
      }),
    ),
  );

  const file = new MemFile();
  commit(file, [
    { name: 'a', data: bytesOf(1, 300) },
    { name: 'b', data: bytesOf(2, 5000) },
  ]);
  out.push(sample('v3-one-commit', file.bytes()));
  commit(file, [{ name: 'c', data: bytesOf(3, 100) }]);
  commit(file, [{ name: 'a', data: bytesOf(4, 64) }]);
  out.push(sample('v3-three-commits', file.bytes()));
  const torn = file.clone();
  const ops = planCommitWrites(torn, [{ name: 'd', data: bytesOf(5, 50) }]);
  const beforeSlot = ops.slice(0, -1).reduce((n, op) => n + op.bytes.length, 0);
  applyWrites(torn, ops, beforeSlot - 20);
  const tornBytes = torn.bytes();
  out.push({ label: 'v3-torn-tail', bytes: tornBytes, ...fieldsOf(file.bytes()) });
  const empty = new MemFile();
  commit(empty, []);
  out.push(sample('v3-empty', empty.bytes()));
  const layout = { operatorType: 63, outputChannels: 8, inputChannels: 4 };
  const withLayouts = new MemFile();
  commit(withLayouts, [
    {
      name: 'l',
      data: bytesOf(6, 128),
      layout: { ...layout, nr: 8, kr: 1, sr: 1, extraBytes: 0, flags: 1 },
    },
    { name: 'n', data: bytesOf(7, 16) },
  ]);
  out.push(sample('v3-layouts', withLayouts.bytes()));
  out.push(
    sample(
      'v2-executorch-byte-names',
      rawV2File({
        dataLength: 8192,
        entries: [
          { name: [0xff, 0xfe], fileOffset: 4096, dataSize: 100, seed: 63 },
          { name: 'a', fileOffset: 0, dataSize: 4096, seed: 59 },
        ],
      }),
    ),
  );
  return out;
}

/** Recomputes the CRCs a v3 file carries (trailer at EOF, header, non-empty slots). */
export function fixCrcs(bytes: Uint8Array): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.length;
  if (n >= 56 && dv.getUint32(n - 8, true) === 0x58505743 && dv.getUint32(n - 4, true) === 3) {
    const hi = dv.getUint32(n - 56 + 4, true);
    const start = dv.getUint32(n - 56, true);
    if (hi === 0 && start <= n - 56) {
      dv.setUint32(n - 12, crc32c(bytes.subarray(start, n - 12)) >>> 0, true);
    }
  }
  if (n >= 32) dv.setUint32(28, crc32c(bytes.subarray(0, 28)) >>> 0, true);
  for (const s of COMMIT_SLOT_OFFSETS) {
    if (n >= s + 32 && bytes.subarray(s, s + 32).some((b) => b !== 0)) {
      dv.setUint32(s + 28, crc32c(bytes.subarray(s, s + 28)) >>> 0, true);
    }
  }
}

const U32_VALUES = [
  0xffff_ffff,
  0x8000_0000,
  0x7fff_ffff,
  MAX_NAME_LENGTH,
  MAX_NAME_LENGTH + 1,
  MAX_ENTRY_COUNT,
  MAX_ENTRY_COUNT + 1,
  MAX_IDENTITY_LENGTH + 1,
  0,
  1,
];
const U64_VALUES = [2n ** 64n - 1n, 2n ** 53n, 2n ** 53n - 1n, 2n ** 32n, 0n, 1n, 4096n];

function setU64(bytes: Uint8Array, at: number, v: bigint): void {
  for (let i = 0; i < 8 && at + i < bytes.length; i++)
    bytes[at + i] = Number((v >> BigInt(8 * i)) & 0xffn);
}

function setU32(bytes: Uint8Array, at: number, v: number): void {
  for (let i = 0; i < 4 && at + i < bytes.length; i++) bytes[at + i] = (v >>> (8 * i)) & 0xff;
}

export const MUTATIONS = [
  'random-bytes',
  'bit-flips',
  'bit-flips+crc',
  'byte-writes',
  'truncate',
  'inflate',
  'inflate+crc',
  'splice',
  'append',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** One mutated file derived from `s` (or random bytes). */
export function mutate(s: Sample, rng: Rng, kind: Mutation = rng.pick(MUTATIONS)): Uint8Array {
  switch (kind) {
    case 'random-bytes': {
      const out = new Uint8Array(rng.int(rng.int(4) === 0 ? 5000 : 300));
      for (let i = 0; i < out.length; i++) out[i] = rng.u32() & 0xff;
      // Often give it a plausible tail so the decoders get past the magic check.
      if (out.length >= 8 && rng.int(3) > 0) setU32(out, out.length - 8, 0x58505743);
      if (out.length >= 4 && rng.int(3) > 0) setU32(out, out.length - 4, rng.pick([1, 2, 3, 3]));
      if (out.length >= 32 && rng.int(4) === 0) {
        setU32(out, 0, 0x58505743);
        setU32(out, 4, 3);
        fixCrcs(out);
      }
      return out;
    }
    case 'bit-flips':
    case 'bit-flips+crc': {
      const out = s.bytes.slice();
      const flips = 1 + rng.int(4);
      for (let i = 0; i < flips && out.length > 0; i++) {
        // Half of the flips land in the last 1.5 KiB (trailer/footer), where they matter most.
        const at =
          rng.int(2) === 0 ? rng.int(out.length) : Math.max(0, out.length - 1 - rng.int(1536));
        out[at] = (out[at] as number) ^ (1 << rng.int(8));
      }
      if (kind === 'bit-flips+crc') fixCrcs(out);
      return out;
    }
    case 'byte-writes': {
      const out = s.bytes.slice();
      const n = 1 + rng.int(8);
      for (let i = 0; i < n && out.length > 0; i++) out[rng.int(out.length)] = rng.u32() & 0xff;
      return out;
    }
    case 'truncate':
      return s.bytes.slice(0, rng.int(s.bytes.length + 1));
    case 'inflate':
    case 'inflate+crc': {
      const out = s.bytes.slice();
      const useU64 = s.u64Fields.length > 0 && (s.u32Fields.length === 0 || rng.int(2) === 0);
      if (useU64) {
        const at = rng.pick(s.u64Fields);
        const base = rng.pick(U64_VALUES);
        setU64(out, at, rng.int(3) === 0 ? base + BigInt(rng.int(9) - 4) : base);
        if (rng.int(4) === 0) setU64(out, at, BigInt(out.length + rng.int(64) - 32));
      } else if (s.u32Fields.length > 0) {
        const at = rng.pick(s.u32Fields);
        const v = rng.int(3) === 0 ? rng.int(200) : rng.pick(U32_VALUES);
        setU32(out, at, v);
      }
      if (kind === 'inflate+crc') fixCrcs(out);
      return out;
    }
    case 'splice': {
      const src = s.bytes;
      const a = rng.int(src.length + 1);
      const len = rng.int(64);
      if (rng.int(2) === 0) {
        const b = Math.min(src.length, a + len);
        const out = new Uint8Array(src.length - (b - a));
        out.set(src.subarray(0, a));
        out.set(src.subarray(b), a);
        return out;
      }
      const out = new Uint8Array(src.length + len);
      out.set(src.subarray(0, a));
      for (let i = 0; i < len; i++) out[a + i] = rng.u32() & 0xff;
      out.set(src.subarray(a), a + len);
      return out;
    }
    case 'append': {
      const extra = rng.int(200);
      const out = new Uint8Array(s.bytes.length + extra);
      out.set(s.bytes);
      for (let i = s.bytes.length; i < out.length; i++) out[i] = rng.u32() & 0xff;
      return out;
    }
  }
}

export interface Escape {
  readonly call: string;
  readonly error: unknown;
}

/**
 * Runs every decoding entry point on `bytes`; returns the calls that threw something other than
 * an XpwcFormatError. Successful decodes are also linted and walked.
 */
export function fuzzOne(bytes: Uint8Array): Escape[] {
  const escapes: Escape[] = [];
  const run = <T>(call: string, f: () => T): T | undefined => {
    try {
      return f();
    } catch (error) {
      if (!(error instanceof XpwcFormatError)) escapes.push({ call, error });
      return undefined;
    }
  };
  const size = bytes.length;
  const after = (t: Trailer | undefined, call: string) => {
    if (t === undefined) return;
    run(`${call}/lint`, () => {
      lintTrailer(t);
      findDuplicateNames(t);
      entriesByName(t.entries);
    });
    if (t.version === 3) {
      for (const e of t.entries.slice(0, 8)) {
        run(`${call}/verifyEntryData`, () =>
          verifyEntryData(e, bytes.subarray(e.fileOffset, e.fileOffset + e.dataSize)),
        );
      }
      run(`${call}/trailerHistory`, () => {
        let n = 0;
        for (const _ of trailerHistory(bytes, t)) if (++n > 100) break;
      });
    }
  };
  after(
    run('decodeTrailer(full)', () => decodeTrailer(bytes, size)),
    'decodeTrailer(full)',
  );
  run('decodeTrailer(bigint)', () =>
    decodeTrailer(bytes, BigInt(size), { expectedIdentity: IDENTITY }),
  );
  run('decodeTrailer(tail)', () => decodeTrailer(bytes.subarray(Math.max(0, size - 56)), size));
  run('readFooter', () => readFooter(bytes.subarray(Math.max(0, size - 56))));
  run('readFooter(size)', () => readFooter(bytes.subarray(Math.max(0, size - 56)), size));
  after(run('readTrailer', () => readTrailer(bytes, size))?.trailer, 'readTrailer');
  run('readTrailer(callback)', () =>
    readTrailer((o, l) => bytes.slice(o, o + l), size, { expectedIdentity: IDENTITY }),
  );
  run('readCommittedTrailer', () => readCommittedTrailer(bytes, size));
  after(
    run('readTrailer(lenient)', () => readTrailer(bytes, size, { lenient: true }))?.trailer,
    'readTrailer(lenient)',
  );
  run('decodeHeader', () => decodeHeader(bytes.subarray(0, V3_HEADER_READ_SIZE)));
  for (const index of [0, 1] as const) {
    const at = COMMIT_SLOT_OFFSETS[index];
    run('decodeCommitSlot', () => decodeCommitSlot(bytes.subarray(at, at + 32), index));
  }
  return escapes;
}

export function hex(bytes: Uint8Array, max = 256): string {
  const shown = Buffer.from(bytes.subarray(Math.max(0, bytes.length - max))).toString('hex');
  return bytes.length > max ? `…${shown}` : shown;
}
