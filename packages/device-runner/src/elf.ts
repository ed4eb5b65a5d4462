import { DeviceRunnerError } from './errors.js';
import { fnv1a64 } from './fnv.js';

// ELF constants (System V gABI / glibc elf.h).
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const ELFDATA2MSB = 2;
const ET_DYN = 3;
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_NOTE = 4;
const NT_GNU_BUILD_ID = 3;
const SHT_DYNSYM = 11;
const DT_NULL = 0n;
const DT_HASH = 4n;
const DT_STRTAB = 5n;
const DT_SYMTAB = 6n;
const DT_STRSZ = 10n;
const DT_SYMENT = 11n;
const DT_GNU_HASH = 0x6ffffef5n;
const EHDR_SIZE = 64;
const PHDR_SIZE = 56;
const SHDR_SIZE = 64;
const SYM_SIZE = 24;
const DYN_SIZE = 16;
const STB_LOCAL = 0;
const SHN_UNDEF = 0;
/** Caps host work on a hostile symbol count; real orchestration objects have a few hundred. */
const MAX_DYNAMIC_SYMBOLS = 1 << 20;

export const STT_OBJECT = 1;
export const STT_FUNC = 2;
export const STT_GNU_IFUNC = 10;

function invalid(message: string): never {
  throw new DeviceRunnerError('ERR_ELF_INVALID', message);
}

interface ProgramHeader {
  readonly type: number;
  readonly offset: number;
  readonly vaddr: number;
  readonly filesz: number;
}

/** Bounds-checked reader over the bytes of one ELF64 file of either byte order. */
class Elf64Reader {
  readonly view: DataView;
  readonly le: boolean;
  readonly type: number;
  readonly machine: number;

  constructor(readonly bytes: Uint8Array) {
    if (bytes.length < EHDR_SIZE) invalid(`${bytes.length} bytes is shorter than an ELF64 header`);
    if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
      invalid('missing the \\x7fELF magic');
    }
    if (bytes[4] !== ELFCLASS64) invalid(`ELF class ${bytes[4]} is not ELFCLASS64`);
    if (bytes[5] !== ELFDATA2LSB && bytes[5] !== ELFDATA2MSB) {
      invalid(`ELF data encoding ${bytes[5]} is unknown`);
    }
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.le = bytes[5] === ELFDATA2LSB;
    this.type = this.u16(16);
    this.machine = this.u16(18);
  }

  private check(offset: number, size: number): void {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + size > this.bytes.length) {
      invalid(`read of ${size} bytes at ${offset} is outside the ${this.bytes.length}-byte file`);
    }
  }

  u8(offset: number): number {
    this.check(offset, 1);
    return this.view.getUint8(offset);
  }

  u16(offset: number): number {
    this.check(offset, 2);
    return this.view.getUint16(offset, this.le);
  }

  u32(offset: number): number {
    this.check(offset, 4);
    return this.view.getUint32(offset, this.le);
  }

  u64big(offset: number): bigint {
    this.check(offset, 8);
    return this.view.getBigUint64(offset, this.le);
  }

  /** A u64 that must be usable as a file offset or size. */
  u64(offset: number): number {
    const value = this.u64big(offset);
    if (value > BigInt(Number.MAX_SAFE_INTEGER))
      invalid(`value ${value} at ${offset} is too large`);
    return Number(value);
  }

  programHeaders(): ProgramHeader[] {
    const phoff = this.u64(32);
    const phentsize = this.u16(54);
    const phnum = this.u16(56);
    if (phnum === 0) return [];
    if (phentsize < PHDR_SIZE) invalid(`e_phentsize ${phentsize} is smaller than ${PHDR_SIZE}`);
    this.check(phoff, phentsize * phnum);
    const headers: ProgramHeader[] = [];
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      const header = {
        type: this.u32(at),
        offset: this.u64(at + 8),
        vaddr: this.u64(at + 16),
        filesz: this.u64(at + 32),
      };
      if (header.offset + header.filesz > this.bytes.length) {
        invalid(`segment ${i} [${header.offset}, +${header.filesz}) runs past the file`);
      }
      headers.push(header);
    }
    return headers;
  }
}

const align4 = (value: number): number => (value + 3) & ~3;

/** The raw GNU build id (desc of the NT_GNU_BUILD_ID note), or null when there is none. */
export function readGnuBuildId(bytes: Uint8Array): Uint8Array | null {
  const elf = new Elf64Reader(bytes);
  for (const segment of elf.programHeaders()) {
    if (segment.type !== PT_NOTE) continue;
    const end = segment.offset + segment.filesz;
    let at = segment.offset;
    while (at + 12 <= end) {
      const namesz = elf.u32(at);
      const descsz = elf.u32(at + 4);
      const type = elf.u32(at + 8);
      const nameStart = at + 12;
      const descStart = nameStart + align4(namesz);
      // Stop at a note that would overrun its segment (spec §2).
      if (descStart > end || descStart + descsz > end) break;
      if (
        type === NT_GNU_BUILD_ID &&
        namesz === 4 &&
        bytes[nameStart] === 0x47 &&
        bytes[nameStart + 1] === 0x4e &&
        bytes[nameStart + 2] === 0x55 &&
        bytes[nameStart + 3] === 0
      ) {
        return new Uint8Array(bytes.subarray(descStart, descStart + descsz));
      }
      at = descStart + align4(descsz);
    }
  }
  return null;
}

/**
 * elf_build_id_64: the first 8 bytes of a GNU build id (>= 8 bytes) as a little-endian
 * u64; otherwise (short, not ELF64, bad program headers, no note) FNV-1a of the input.
 */
export function elfBuildId64(bytes: Uint8Array): bigint {
  let id: Uint8Array | null = null;
  try {
    id = readGnuBuildId(bytes);
  } catch (error) {
    if (!(error instanceof DeviceRunnerError)) throw error;
  }
  if (id && id.length >= 8) {
    return new DataView(id.buffer, id.byteOffset, 8).getBigUint64(0, true);
  }
  return fnv1a64(bytes);
}

export interface DynamicSymbol {
  readonly name: string;
  readonly value: bigint;
  readonly size: bigint;
  /** STT_* */
  readonly type: number;
  /** STB_* */
  readonly binding: number;
  readonly sectionIndex: number;
}

export interface SharedObjectInfo {
  readonly machine: number;
  readonly buildId: Uint8Array | null;
  /** How the dynamic symbol count was found. */
  readonly symbolCountSource: 'DT_HASH' | 'DT_GNU_HASH' | 'SHT_DYNSYM';
  readonly symbols: readonly DynamicSymbol[];
  /** A defined, non-local dynamic symbol by name (what dlsym would return). */
  lookup(name: string): DynamicSymbol | undefined;
}

function vaddrToOffset(loads: readonly ProgramHeader[], vaddr: number, what: string): number {
  for (const load of loads) {
    if (vaddr >= load.vaddr && vaddr < load.vaddr + load.filesz) {
      return load.offset + (vaddr - load.vaddr);
    }
  }
  return invalid(`${what} address 0x${vaddr.toString(16)} is in no PT_LOAD segment`);
}

function gnuHashSymbolCount(elf: Elf64Reader, at: number): number {
  const nbuckets = elf.u32(at);
  const symoffset = elf.u32(at + 4);
  const bloomSize = elf.u32(at + 8);
  const bucketsAt = at + 16 + 8 * bloomSize;
  const chainsAt = bucketsAt + 4 * nbuckets;
  let last = 0;
  for (let i = 0; i < nbuckets; i++) last = Math.max(last, elf.u32(bucketsAt + 4 * i));
  if (last === 0) return symoffset;
  if (last < symoffset) invalid(`GNU hash bucket ${last} is below symoffset ${symoffset}`);
  // Walk the last chain to its terminator (low bit set); u32 reads bound the walk.
  for (let index = last; ; index++) {
    if (index - symoffset > MAX_DYNAMIC_SYMBOLS) invalid('GNU hash chain does not terminate');
    if ((elf.u32(chainsAt + 4 * (index - symoffset)) & 1) === 1) return index + 1;
  }
}

function dynsymSectionCount(elf: Elf64Reader): number | null {
  const shoff = elf.u64(40);
  const shentsize = elf.u16(58);
  const shnum = elf.u16(60);
  if (shoff === 0 || shnum === 0 || shentsize < SHDR_SIZE) return null;
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    if (elf.u32(at + 4) === SHT_DYNSYM) return Math.floor(elf.u64(at + 32) / SYM_SIZE);
  }
  return null;
}

function readCString(bytes: Uint8Array, start: number, end: number): string {
  const nul = bytes.subarray(start, end).indexOf(0);
  if (nul < 0) invalid(`symbol name at ${start} is not NUL-terminated inside the string table`);
  return new TextDecoder().decode(bytes.subarray(start, start + nul));
}

/**
 * Parses what the AICPU's dlopen needs: an ELF64 ET_DYN with a PT_DYNAMIC whose
 * DT_SYMTAB/DT_STRTAB describe the dynamic symbols; the count comes from DT_HASH,
 * DT_GNU_HASH or, failing both, the .dynsym section header. Every read is bounds-checked.
 */
export function parseSharedObject(bytes: Uint8Array): SharedObjectInfo {
  const elf = new Elf64Reader(bytes);
  if (elf.type !== ET_DYN) {
    throw new DeviceRunnerError(
      'ERR_ELF_NOT_SHARED_OBJECT',
      `e_type ${elf.type} is not ET_DYN (a shared object)`,
    );
  }
  const headers = elf.programHeaders();
  const loads = headers.filter((h) => h.type === PT_LOAD);
  const dynamic = headers.find((h) => h.type === PT_DYNAMIC);
  if (!dynamic) {
    throw new DeviceRunnerError('ERR_ELF_NOT_SHARED_OBJECT', 'no PT_DYNAMIC segment');
  }

  const tags = new Map<bigint, number>();
  for (let at = dynamic.offset; at + DYN_SIZE <= dynamic.offset + dynamic.filesz; at += DYN_SIZE) {
    const tag = elf.u64big(at);
    if (tag === DT_NULL) break;
    if (!tags.has(tag)) tags.set(tag, elf.u64(at + 8));
  }
  const symtabAddr = tags.get(DT_SYMTAB);
  const strtabAddr = tags.get(DT_STRTAB);
  if (symtabAddr === undefined || strtabAddr === undefined) {
    invalid('the dynamic segment lacks DT_SYMTAB or DT_STRTAB');
  }
  const syment = tags.get(DT_SYMENT) ?? SYM_SIZE;
  if (syment !== SYM_SIZE) invalid(`DT_SYMENT ${syment} is not ${SYM_SIZE}`);
  const symtab = vaddrToOffset(loads, symtabAddr, 'DT_SYMTAB');
  const strtab = vaddrToOffset(loads, strtabAddr, 'DT_STRTAB');
  const strsz = tags.get(DT_STRSZ) ?? bytes.length - strtab;
  if (strtab + strsz > bytes.length) invalid(`DT_STRSZ ${strsz} runs past the file`);

  let count: number;
  let symbolCountSource: SharedObjectInfo['symbolCountSource'];
  const hashAddr = tags.get(DT_HASH);
  const gnuHashAddr = tags.get(DT_GNU_HASH);
  if (hashAddr !== undefined) {
    count = elf.u32(vaddrToOffset(loads, hashAddr, 'DT_HASH') + 4);
    symbolCountSource = 'DT_HASH';
  } else if (gnuHashAddr !== undefined) {
    count = gnuHashSymbolCount(elf, vaddrToOffset(loads, gnuHashAddr, 'DT_GNU_HASH'));
    symbolCountSource = 'DT_GNU_HASH';
  } else {
    const fromSections = dynsymSectionCount(elf);
    if (fromSections === null) invalid('no DT_HASH, DT_GNU_HASH or .dynsym gives the symbol count');
    count = fromSections;
    symbolCountSource = 'SHT_DYNSYM';
  }
  if (count > MAX_DYNAMIC_SYMBOLS)
    invalid(`${count} dynamic symbols exceed ${MAX_DYNAMIC_SYMBOLS}`);
  if (symtab + count * SYM_SIZE > bytes.length) {
    invalid(`${count} symbols at ${symtab} run past the file`);
  }

  const symbols: DynamicSymbol[] = [];
  const byName = new Map<string, DynamicSymbol>();
  for (let i = 0; i < count; i++) {
    const at = symtab + i * SYM_SIZE;
    const nameOffset = elf.u32(at);
    if (nameOffset >= strsz) invalid(`symbol ${i} name offset ${nameOffset} is past DT_STRSZ`);
    const info = elf.u8(at + 4);
    const symbol: DynamicSymbol = {
      name: readCString(bytes, strtab + nameOffset, strtab + strsz),
      type: info & 0xf,
      binding: info >> 4,
      sectionIndex: elf.u16(at + 6),
      value: elf.u64big(at + 8),
      size: elf.u64big(at + 16),
    };
    symbols.push(symbol);
    if (
      symbol.name !== '' &&
      symbol.sectionIndex !== SHN_UNDEF &&
      symbol.binding !== STB_LOCAL &&
      !byName.has(symbol.name)
    ) {
      byName.set(symbol.name, symbol);
    }
  }

  let buildId: Uint8Array | null = null;
  try {
    buildId = readGnuBuildId(bytes);
  } catch (error) {
    if (!(error instanceof DeviceRunnerError)) throw error;
  }

  return {
    machine: elf.machine,
    buildId,
    symbolCountSource,
    symbols,
    lookup: (name) => byName.get(name),
  };
}
