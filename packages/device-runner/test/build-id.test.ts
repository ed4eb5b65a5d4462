// elf_build_id_64 against a port of simpler's elf_build_id.h (src/common/utils, 6ebaf7715)
// written with C semantics: size_t sums wrap at 2^64, (n + 3u) & ~3u wraps at 2^32, and
// pointer reads outside the buffer are reported instead of performed.
import { describe, expect, it } from 'vitest';
import { elfBuildId64, parseSharedObject, writeSharedObject } from '../src/index.js';
import { errorCode } from './support/callables.js';
import { buildSharedObject, hasCc, makeTempDir } from './support/cc.js';
import { fnvReference } from './support/reference.js';

const MASK64 = (1n << 64n) - 1n;
const OUT_OF_BOUNDS = Symbol('upstream reads outside the buffer');

function upstreamElfBuildId64(data: Uint8Array): bigint | typeof OUT_OF_BOUNDS {
  const len = BigInt(data.length);
  if (data.length < 64) return fnvReference(data);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const at = (p: bigint, n: number): number => {
    if (p < 0n || p + BigInt(n) > len) throw OUT_OF_BOUNDS;
    return Number(p);
  };
  const u16 = (p: bigint) => view.getUint16(at(p, 2), true);
  const u32 = (p: bigint) => view.getUint32(at(p, 4), true);
  const u64 = (p: bigint) => view.getBigUint64(at(p, 8), true);
  if (
    data[0] !== 0x7f ||
    data[1] !== 0x45 ||
    data[2] !== 0x4c ||
    data[3] !== 0x46 ||
    data[4] !== 2
  ) {
    return fnvReference(data);
  }
  const phoff = u64(32n);
  const phentsize = u16(54n);
  const phnum = u16(56n);
  if (phoff === 0n || phentsize < 56) return fnvReference(data);
  if (((phoff + BigInt(phnum) * BigInt(phentsize)) & MASK64) > len) return fnvReference(data);
  try {
    for (let i = 0n; i < BigInt(phnum); i++) {
      const phdr = (phoff + i * BigInt(phentsize)) & MASK64;
      at(phdr, 56); // memcpy of the whole Elf64_Phdr
      if (u32(phdr) !== 4) continue;
      const offset = u64(phdr + 8n);
      const filesz = u64(phdr + 32n);
      if (((offset + filesz) & MASK64) > len) continue;
      // Pointers as offsets from base; a sum past 2^64 is a wild pointer in C.
      if (offset + filesz > MASK64) return OUT_OF_BOUNDS;
      let note = offset;
      const end = offset + filesz;
      while (note + 12n <= end) {
        const namesz = u32(note);
        const descsz = u32(note + 4n);
        const type = u32(note + 8n);
        const name = note + 12n;
        const nameAligned = BigInt(((namesz + 3) >>> 0) & ~3 & 0xffffffff) & 0xffffffffn;
        const desc = name + nameAligned;
        const descAligned = BigInt(((descsz + 3) >>> 0) & ~3 & 0xffffffff) & 0xffffffffn;
        const next = desc + descAligned;
        if (next > end) break;
        if (
          type === 3 &&
          namesz === 4 &&
          u32(name) === 0x00554e47 && // "GNU\0" little-endian
          descsz >= 8
        ) {
          return u64(desc);
        }
        note = next;
      }
    }
  } catch (error) {
    if (error === OUT_OF_BOUNDS) return OUT_OF_BOUNDS;
    throw error;
  }
  return fnvReference(data);
}

/** Deterministic PRNG (mulberry32), so a failing input can be reproduced from its index. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const id = Uint8Array.from({ length: 20 }, (_, i) => 0xa0 + i);
const symbols = [{ name: 'aicpu_orchestration_entry' }, { name: 'aicpu_orchestration_config' }];

describe('elf_build_id_64 follows upstream', () => {
  it('a segment running past the file is skipped alone: the build id is still found', () => {
    const so = writeSharedObject({ symbols, buildId: id });
    const view = new DataView(so.buffer);
    view.setBigUint64(64 + 8, 1n << 40n, true); // PT_LOAD p_offset far past the end
    expect(errorCode(() => parseSharedObject(so))).toBe('ERR_ELF_INVALID');
    expect(elfBuildId64(so)).toBe(0xa7a6a5a4a3a2a1a0n);
    expect(upstreamElfBuildId64(so)).toBe(0xa7a6a5a4a3a2a1a0n);
  });

  it('a PT_NOTE whose offset + size wraps past 2^64 is skipped, not read out of bounds', () => {
    const so = writeSharedObject({ symbols, buildId: id });
    const view = new DataView(so.buffer);
    const note = 64 + 2 * 56;
    view.setBigUint64(note + 8, MASK64 - 3n, true);
    view.setBigUint64(note + 32, 8n, true);
    expect(upstreamElfBuildId64(so)).toBe(OUT_OF_BOUNDS);
    expect(elfBuildId64(so)).toBe(fnvReference(so));
  });

  it('a note whose 4-aligned desc overruns the segment ends the walk (upstream pads)', () => {
    const so = writeSharedObject({ symbols, buildId: id.subarray(0, 18) });
    const view = new DataView(so.buffer);
    const note = 64 + 2 * 56;
    const filesz = view.getBigUint64(note + 32, true);
    view.setBigUint64(note + 32, filesz - 2n, true); // desc fits, its padding does not
    expect(upstreamElfBuildId64(so)).toBe(fnvReference(so));
    expect(elfBuildId64(so)).toBe(fnvReference(so));
  });

  it('matches the port on 8,044 mutated objects (headers, program headers, notes)', () => {
    const originals = [
      writeSharedObject({ symbols, buildId: id }),
      writeSharedObject({ symbols, buildId: id, hashStyle: 'gnu' }),
      writeSharedObject({ symbols, buildId: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9) }),
    ];
    if (hasCc) {
      const temp = makeTempDir();
      try {
        const src = 'int aicpu_orchestration_entry(void) { return 0; }\n';
        originals.push(buildSharedObject(temp.dir, 'o', src, ['-Wl,--build-id']).bytes);
      } finally {
        temp.cleanup();
      }
    }
    const random = prng(1082);
    let compared = 0;
    let skipped = 0;
    for (let n = 0; n < 8044; n++) {
      const original = originals[n % originals.length] as Uint8Array;
      const bytes = original.slice();
      const view = new DataView(bytes.buffer);
      const phoff = Number(view.getBigUint64(32, true));
      const phnum = view.getUint16(56, true);
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const region = random();
        // Mostly the ELF header and program headers, some anywhere (notes included).
        const span = region < 0.2 ? 64 : region < 0.8 ? phoff + phnum * 56 : bytes.length;
        const start = region >= 0.2 && region < 0.8 ? phoff : 0;
        const pos = start + Math.floor(random() * (span - start));
        bytes[pos] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
      }
      const cut = random() < 0.1 ? Math.floor(random() * bytes.length) : bytes.length;
      const input = bytes.subarray(0, cut);
      const expected = upstreamElfBuildId64(input);
      if (expected === OUT_OF_BOUNDS) {
        skipped++;
        continue;
      }
      const actual = elfBuildId64(input);
      if (actual !== expected) {
        throw new Error(`input ${n}: ${actual.toString(16)} != upstream ${expected.toString(16)}`);
      }
      compared++;
    }
    expect(compared + skipped).toBe(8044);
    expect(compared).toBeGreaterThan(8000);
  });
});
