// Hostile orchestration objects built by hand: a well-formed ELF64 shared object whose
// dynamic symbols all name bytes of one string table entry.

export interface BombSpec {
  /** Dynamic symbols written into the file (and declared by DT_HASH's nchain). */
  readonly symbols: number;
  /** Length of the one name in .dynstr. */
  readonly nameLength: number;
  /** Byte of the name (0x41 'A' by default; >= 0x80 makes it invalid UTF-8). */
  readonly nameByte?: number;
  /** Where each symbol's name starts: 1 for all (the default) or spread over the name. */
  readonly spread?: boolean;
}

export function elfBomb(spec: BombSpec): Uint8Array {
  const dynOff = 64 + 2 * 56;
  const dynSize = 6 * 16;
  const hashOff = dynOff + dynSize;
  const strOff = hashOff + 12;
  const strSize = spec.nameLength + 2;
  const symOff = Math.ceil((strOff + strSize) / 8) * 8;
  const total = symOff + spec.symbols * 24;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  view.setUint16(16, 3, true); // ET_DYN
  view.setUint16(18, 62, true);
  view.setBigUint64(32, 64n, true);
  view.setUint16(52, 64, true);
  view.setUint16(54, 56, true);
  view.setUint16(56, 2, true);
  const phdr = (at: number, type: number, offset: number, size: number) => {
    view.setUint32(at, type, true);
    view.setBigUint64(at + 8, BigInt(offset), true);
    view.setBigUint64(at + 16, BigInt(offset), true);
    view.setBigUint64(at + 32, BigInt(size), true);
    view.setBigUint64(at + 40, BigInt(size), true);
  };
  phdr(64, 1, 0, total); // PT_LOAD over the whole file at vaddr 0
  phdr(64 + 56, 2, dynOff, dynSize); // PT_DYNAMIC
  const dyn: [bigint, number][] = [
    [4n, hashOff],
    [5n, strOff],
    [6n, symOff],
    [10n, strSize],
    [11n, 24],
    [0n, 0],
  ];
  dyn.forEach(([tag, value], i) => {
    view.setBigUint64(dynOff + 16 * i, tag, true);
    view.setBigUint64(dynOff + 16 * i + 8, BigInt(value), true);
  });
  view.setUint32(hashOff, 1, true); // nbucket
  view.setUint32(hashOff + 4, spec.symbols, true); // nchain = symbol count
  out.fill(spec.nameByte ?? 0x41, strOff + 1, strOff + 1 + spec.nameLength);
  for (let i = 0; i < spec.symbols; i++) {
    const at = symOff + 24 * i;
    const name = spec.spread ? 1 + (i % spec.nameLength) : 1;
    view.setUint32(at, name, true);
    view.setUint8(at + 4, 0x12); // GLOBAL FUNC
    view.setUint16(at + 6, 7, true);
    view.setBigUint64(at + 8, BigInt(0x1000 + 16 * i), true);
  }
  return out;
}
