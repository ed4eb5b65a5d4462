/**
 * Writes minimal but well-formed ELF64 little-endian shared objects (ET_DYN with one
 * PT_LOAD at vaddr 0, a PT_DYNAMIC and optionally a PT_NOTE build id): orchestration objects
 * for the simulated AICPU where no C toolchain is at hand, and malformed ones on purpose.
 */
export interface SymbolSpec {
  readonly name: string;
  readonly value?: bigint;
  /** STT_*: 2 FUNC (default), 1 OBJECT. */
  readonly type?: number;
  /** STB_*: 1 GLOBAL (default), 0 LOCAL, 2 WEAK. */
  readonly binding?: number;
  /** false writes an undefined (imported) symbol. */
  readonly defined?: boolean;
}

export interface ElfSpec {
  readonly symbols: readonly SymbolSpec[];
  readonly buildId?: Uint8Array | null;
  readonly hashStyle?: 'sysv' | 'gnu' | 'sections';
  readonly type?: number;
}

const encoder = new TextEncoder();
const align = (value: number, to: number): number => Math.ceil(value / to) * to;

function gnuHash(name: string): number {
  let h = 5381;
  for (const byte of encoder.encode(name)) h = (Math.imul(h, 33) + byte) >>> 0;
  return h;
}

export function writeSharedObject(spec: ElfSpec): Uint8Array {
  const hashStyle = spec.hashStyle ?? 'sysv';
  const buildId = spec.buildId === undefined ? new Uint8Array(20).fill(0xab) : spec.buildId;
  const symbols = [{ name: '', defined: false } as SymbolSpec, ...spec.symbols];

  // String table.
  const names: number[] = [];
  const strParts: number[] = [0];
  for (const symbol of symbols) {
    if (symbol.name === '') {
      names.push(0);
      continue;
    }
    names.push(strParts.length);
    strParts.push(...encoder.encode(symbol.name), 0);
  }
  const dynstr = Uint8Array.from(strParts);

  const phnum = buildId ? 3 : 2;
  const phoff = 64;
  const dynsymOff = align(phoff + phnum * 56, 8);
  const dynstrOff = dynsymOff + symbols.length * 24;
  const hashOff = align(dynstrOff + dynstr.length, 8);
  let hashSize = 0;
  if (hashStyle === 'sysv') hashSize = 8 + 4 + 4 * symbols.length;
  if (hashStyle === 'gnu') hashSize = 16 + 8 + 4 + 4 * (symbols.length - 1);
  const noteOff = align(hashOff + hashSize, 8);
  const noteSize = buildId ? 12 + 4 + align(buildId.length, 4) : 0;
  const dynOff = align(noteOff + noteSize, 8);
  const dynEntries: [bigint, bigint][] = [];
  if (hashStyle === 'sysv') dynEntries.push([4n, BigInt(hashOff)]);
  if (hashStyle === 'gnu') dynEntries.push([0x6ffffef5n, BigInt(hashOff)]);
  dynEntries.push([5n, BigInt(dynstrOff)], [6n, BigInt(dynsymOff)]);
  dynEntries.push([10n, BigInt(dynstr.length)], [11n, 24n], [0n, 0n]);
  const dynSize = dynEntries.length * 16;
  const shoff = align(dynOff + dynSize, 8);
  const shnum = hashStyle === 'sections' ? 3 : 0;
  const total = shoff + shnum * 64;

  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  view.setUint16(16, spec.type ?? 3, true);
  view.setUint16(18, 62, true);
  view.setUint32(20, 1, true);
  view.setBigUint64(32, BigInt(phoff), true);
  view.setBigUint64(40, BigInt(shnum ? shoff : 0), true);
  view.setUint16(52, 64, true);
  view.setUint16(54, 56, true);
  view.setUint16(56, phnum, true);
  view.setUint16(58, 64, true);
  view.setUint16(60, shnum, true);

  const phdr = (i: number, type: number, offset: number, size: number): void => {
    const at = phoff + i * 56;
    view.setUint32(at, type, true);
    view.setUint32(at + 4, 4, true);
    view.setBigUint64(at + 8, BigInt(offset), true);
    view.setBigUint64(at + 16, BigInt(offset), true);
    view.setBigUint64(at + 24, BigInt(offset), true);
    view.setBigUint64(at + 32, BigInt(size), true);
    view.setBigUint64(at + 40, BigInt(size), true);
    view.setBigUint64(at + 48, 8n, true);
  };
  phdr(0, 1, 0, total);
  phdr(1, 2, dynOff, dynSize);
  if (buildId) phdr(2, 4, noteOff, noteSize);

  symbols.forEach((symbol, i) => {
    const at = dynsymOff + i * 24;
    view.setUint32(at, names[i] as number, true);
    if (i === 0) return;
    view.setUint8(at + 4, ((symbol.binding ?? 1) << 4) | (symbol.type ?? 2));
    view.setUint16(at + 6, symbol.defined === false ? 0 : 7, true);
    view.setBigUint64(at + 8, symbol.value ?? BigInt(0x1000 + i * 16), true);
    view.setBigUint64(at + 16, 16n, true);
  });
  out.set(dynstr, dynstrOff);

  if (hashStyle === 'sysv') {
    view.setUint32(hashOff, 1, true);
    view.setUint32(hashOff + 4, symbols.length, true);
    view.setUint32(hashOff + 8, symbols.length - 1, true);
    for (let i = 1; i < symbols.length; i++) view.setUint32(hashOff + 12 + 4 * i, i - 1, true);
  }
  if (hashStyle === 'gnu') {
    view.setUint32(hashOff, 1, true);
    view.setUint32(hashOff + 4, 1, true);
    view.setUint32(hashOff + 8, 1, true);
    view.setUint32(hashOff + 12, 6, true);
    view.setBigUint64(hashOff + 16, 0xffffffffffffffffn, true);
    view.setUint32(hashOff + 24, symbols.length > 1 ? 1 : 0, true);
    for (let i = 1; i < symbols.length; i++) {
      const last = i === symbols.length - 1;
      const h = (gnuHash((symbols[i] as SymbolSpec).name) & ~1) | (last ? 1 : 0);
      view.setUint32(hashOff + 28 + 4 * (i - 1), h >>> 0, true);
    }
  }
  if (buildId) {
    view.setUint32(noteOff, 4, true);
    view.setUint32(noteOff + 4, buildId.length, true);
    view.setUint32(noteOff + 8, 3, true);
    out.set([0x47, 0x4e, 0x55, 0], noteOff + 12);
    out.set(buildId, noteOff + 16);
  }
  dynEntries.forEach(([tag, value], i) => {
    view.setBigUint64(dynOff + i * 16, tag, true);
    view.setBigUint64(dynOff + i * 16 + 8, value, true);
  });
  if (shnum) {
    // [0] null, [1] .dynsym (SHT_DYNSYM), [2] .dynstr (SHT_STRTAB)
    const sh = (i: number, type: number, offset: number, size: number, entsize: number): void => {
      const at = shoff + i * 64;
      view.setUint32(at + 4, type, true);
      view.setBigUint64(at + 16, BigInt(offset), true);
      view.setBigUint64(at + 24, BigInt(offset), true);
      view.setBigUint64(at + 32, BigInt(size), true);
      view.setBigUint64(at + 56, BigInt(entsize), true);
    };
    sh(1, 11, dynsymOff, symbols.length * 24, 24);
    sh(2, 3, dynstrOff, dynstr.length, 0);
  }
  return out;
}

/**
 * A loadable orchestration object: the entry (default aicpu_orchestration_entry), the
 * config symbol aicpu_orchestration_config, and the two functions host_build_graph
 * requires, with a 20-byte build id derived from `tag`.
 */
export function orchestrationObject(tag: number, entry = 'aicpu_orchestration_entry'): Uint8Array {
  const id = new Uint8Array(20);
  new DataView(id.buffer).setUint32(0, tag, true);
  id[19] = 0x5a;
  return writeSharedObject({
    buildId: id,
    symbols: [
      { name: entry, value: BigInt(0x1100 + tag * 16) },
      { name: 'aicpu_orchestration_config', value: 0x2000n },
      { name: 'framework_bind_runtime', value: 0x2100n },
      { name: 'framework_prewarm_graph_recorders', value: 0x2200n },
    ],
  });
}
