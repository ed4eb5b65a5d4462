import { fnv1a64 } from './fnv.js';

// Offsets of ELF64 fields (System V gABI); all read little-endian, as upstream's memcpy on
// a little-endian host does (elf_build_id.h does not look at EI_DATA).
const EHDR_SIZE = 64;
const PHDR_SIZE = 56;
const NHDR_SIZE = 12;
const ELFCLASS64 = 2;
const PT_NOTE = 4;
const NT_GNU_BUILD_ID = 3;

/**
 * The desc of every NT_GNU_BUILD_ID note with name "GNU\0", walked the way simpler's
 * elf_build_id_64 walks them (src/common/utils/elf_build_id.h): a bad program header table
 * ends the walk, a PT_NOTE segment past the buffer is skipped (only that segment), and a
 * note whose 4-aligned name + desc overruns its segment ends that segment. Offsets are
 * added exactly, so a sum that wraps around 2^64 in C (upstream then reads out of bounds)
 * counts as out of range here.
 */
function* gnuBuildIdNotes(bytes: Uint8Array): Generator<Uint8Array> {
  if (bytes.length < EHDR_SIZE) return;
  if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) return;
  if (bytes[4] !== ELFCLASS64) return;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = BigInt(bytes.length);
  const phoff = view.getBigUint64(32, true);
  const phentsize = view.getUint16(54, true);
  const phnum = view.getUint16(56, true);
  if (phoff === 0n || phentsize < PHDR_SIZE) return;
  if (phoff + BigInt(phnum * phentsize) > length) return;
  for (let i = 0; i < phnum; i++) {
    const at = Number(phoff) + i * phentsize;
    if (view.getUint32(at, true) !== PT_NOTE) continue;
    const offset = view.getBigUint64(at + 8, true);
    const filesz = view.getBigUint64(at + 32, true);
    if (offset + filesz > length) continue;
    const end = Number(offset + filesz);
    let note = Number(offset);
    while (note + NHDR_SIZE <= end) {
      const namesz = view.getUint32(note, true);
      const descsz = view.getUint32(note + 4, true);
      const type = view.getUint32(note + 8, true);
      const name = note + NHDR_SIZE;
      // (n + 3u) & ~3u in 32-bit unsigned arithmetic, wrap included, as upstream computes it.
      const desc = name + (((namesz + 3) & ~3) >>> 0);
      const next = desc + (((descsz + 3) & ~3) >>> 0);
      if (next > end) break;
      if (
        type === NT_GNU_BUILD_ID &&
        namesz === 4 &&
        bytes[name] === 0x47 &&
        bytes[name + 1] === 0x4e &&
        bytes[name + 2] === 0x55 &&
        bytes[name + 3] === 0
      ) {
        yield bytes.subarray(desc, desc + descsz);
      }
      note = next;
    }
  }
}

/** The raw GNU build id (desc of the first NT_GNU_BUILD_ID note), or null when there is none. */
export function readGnuBuildId(bytes: Uint8Array): Uint8Array | null {
  for (const desc of gnuBuildIdNotes(bytes)) return new Uint8Array(desc);
  return null;
}

/**
 * elf_build_id_64: the first 8 bytes of the first GNU build id of at least 8 bytes, as a
 * little-endian u64; when there is none (short input, not ELF64, bad program header table,
 * no such note), FNV-1a of the whole input.
 */
export function elfBuildId64(bytes: Uint8Array): bigint {
  for (const desc of gnuBuildIdNotes(bytes)) {
    if (desc.length >= 8) {
      return new DataView(desc.buffer, desc.byteOffset, 8).getBigUint64(0, true);
    }
  }
  return fnv1a64(bytes);
}
