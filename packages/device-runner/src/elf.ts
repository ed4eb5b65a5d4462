import { readGnuBuildId } from './build-id.js';
import { DeviceRunnerError } from './errors.js';

// ELF constants (System V gABI / glibc elf.h).
const ELFCLASS64 = 2;
const ELFDATA2LSB = 1;
const ELFDATA2MSB = 2;
const ET_DYN = 3;
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
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
const SHN_UNDEF = 0;

// Limits on what parsing an untrusted object may produce. Counts bound the work, the byte
// budget bounds the memory: 2^20 symbols that all name one 16 KiB string would otherwise
// decode to 16 GiB of names from a 24 MiB file. The fuzz budget test holds the parsed
// result to at most 16 heap bytes per input byte (plus 1 MiB).
/** Orchestration objects have a few hundred dynamic symbols (libstdc++ has ~6,000). */
export const MAX_DYNAMIC_SYMBOLS = 1 << 16;
/** The AICPU looks up names of at most 63 bytes; the longest mangled C++ names are a few KiB. */
export const MAX_SYMBOL_NAME_BYTES = 4096;
/** Names share bytes only through tail merging, so all decoded names fit in the file twice. */
export const SYMBOL_NAME_BYTES_PER_INPUT_BYTE = 2;
/** Linkers write a few dozen dynamic entries; the parser reads at most this many. */
export const MAX_DYNAMIC_ENTRIES = 4096;

export const STB_LOCAL = 0;
export const STB_GLOBAL = 1;
export const STB_WEAK = 2;

export const STT_OBJECT = 1;
export const STT_FUNC = 2;
export const STT_GNU_IFUNC = 10;

function invalid(message: string): never {
  throw new DeviceRunnerError('ERR_ELF_INVALID', message);
}

function overLimit(message: string): never {
  throw new DeviceRunnerError('ERR_ELF_LIMIT_EXCEEDED', message);
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

const decoder = new TextDecoder();

/** The NUL-terminated name at `start`, looking no further than MAX_SYMBOL_NAME_BYTES. */
function readName(bytes: Uint8Array, start: number, end: number): Uint8Array {
  const window = bytes.subarray(start, Math.min(end, start + MAX_SYMBOL_NAME_BYTES + 1));
  const nul = window.indexOf(0);
  if (nul >= 0) return window.subarray(0, nul);
  if (window.length > MAX_SYMBOL_NAME_BYTES) {
    overLimit(`symbol name at ${start} is longer than ${MAX_SYMBOL_NAME_BYTES} bytes`);
  }
  return invalid(`symbol name at ${start} is not NUL-terminated inside the string table`);
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

  // Only the tags the loader needs are kept; the first occurrence wins.
  const tags = new Map<bigint, number>();
  const wanted = new Set([DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_GNU_HASH]);
  const dynamicEnd = dynamic.offset + dynamic.filesz;
  for (let at = dynamic.offset, n = 0; at + DYN_SIZE <= dynamicEnd; at += DYN_SIZE, n++) {
    if (n >= MAX_DYNAMIC_ENTRIES) overLimit(`more than ${MAX_DYNAMIC_ENTRIES} dynamic entries`);
    const tag = elf.u64big(at);
    if (tag === DT_NULL) break;
    if (wanted.has(tag) && !tags.has(tag)) tags.set(tag, elf.u64(at + 8));
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
  if (count > MAX_DYNAMIC_SYMBOLS) {
    overLimit(`${count} dynamic symbols exceed ${MAX_DYNAMIC_SYMBOLS}`);
  }
  if (symtab + count * SYM_SIZE > bytes.length) {
    invalid(`${count} symbols at ${symtab} run past the file`);
  }

  const symbols: DynamicSymbol[] = [];
  const byName = new Map<string, DynamicSymbol>();
  const nameBudget = SYMBOL_NAME_BYTES_PER_INPUT_BYTE * bytes.length;
  let nameBytes = 0;
  for (let i = 0; i < count; i++) {
    const at = symtab + i * SYM_SIZE;
    const nameOffset = elf.u32(at);
    if (nameOffset >= strsz) invalid(`symbol ${i} name offset ${nameOffset} is past DT_STRSZ`);
    const info = elf.u8(at + 4);
    const name = readName(bytes, strtab + nameOffset, strtab + strsz);
    nameBytes += name.length;
    if (nameBytes > nameBudget) {
      overLimit(
        `the symbol names decode to more than ${nameBudget} bytes (${SYMBOL_NAME_BYTES_PER_INPUT_BYTE}x the ${bytes.length}-byte object)`,
      );
    }
    const symbol: DynamicSymbol = {
      name: decoder.decode(name),
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

  return {
    machine: elf.machine,
    buildId: readGnuBuildId(bytes),
    symbolCountSource,
    symbols,
    lookup: (name) => byName.get(name),
  };
}
