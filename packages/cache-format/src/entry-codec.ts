// The index entry codec shared by v2 and v3: name_len, name, then the fields of ENTRY_FIELDS.
import { isSafeOffset, isU32, readU64, viewOf, writeU64 } from './bytes.js';
import {
  ENTRY_FIELDS,
  ENTRY_NAME_OFFSET,
  V2_ENTRY_FIXED_SIZE,
  V3_ENTRY_FIXED_SIZE,
  V3_ENTRY_LAYOUT_SIZE,
  V3_HEADER_SIZE,
} from './constants.js';
import { invalidArgument, XpwcFormatError } from './errors.js';
import { MAX_NAME_LENGTH, MAX_TRAILER_BYTES } from './limits.js';
import { latin1Text, nameFromBytes, nameToBytes } from './names.js';

/** A character of a latin1 text that is no ASCII byte: the name is decoded as UTF-8 instead. */
const NON_ASCII = /[\u0080-\uffff]/;

import {
  checkPackingLayout,
  readPackingLayoutShared,
  writePackingLayout,
} from './packing-layout.js';
import type { EntryColumns, PackingLayout, XpwcEntryV2, XpwcEntryV3, XpwcIssue } from './types.js';

/** Which entry fields a trailer carries. */
export interface EntryFormat {
  readonly version: 2 | 3;
  /** v3 with the footer flag V3_FLAG_ENTRY_LAYOUT: a layout record follows crc32c. */
  readonly withLayout: boolean;
}

/** Bytes of one entry besides its name. */
export function entryFixedSize(format: EntryFormat): number {
  if (format.version === 2) return V2_ENTRY_FIXED_SIZE;
  return V3_ENTRY_FIXED_SIZE + (format.withLayout ? V3_ENTRY_LAYOUT_SIZE : 0);
}

/** Packed data lives after the v3 header; a v2 file has no header. */
function dataStart(format: EntryFormat): number {
  return format.version === 2 ? 0 : V3_HEADER_SIZE;
}

/**
 * Decodes `count` entries from `indexStart` up to exactly `stop` (absolute offsets; `base` is
 * the absolute offset of bytes[0]) into columns: no object per entry (in a fresh process,
 * before V8 optimizes the loop, an object literal per entry cost a third of the decode).
 * Applies ExecuTorch's per-entry checks and ours. With a `tolerated` list (lenient v2), an
 * index that runs out of bytes before `count` entries and bytes after the last entry are
 * recorded there instead of thrown, as ExecuTorch's loader stops reading when fewer than 4
 * bytes remain and ignores what follows the last entry.
 */
export function decodeEntries(
  bytes: Uint8Array,
  base: number,
  indexStart: number,
  stop: number,
  count: number,
  format: EntryFormat,
  tolerated: XpwcIssue[] | null,
): EntryColumns {
  const dv = viewOf(bytes);
  const F = ENTRY_FIELDS;
  const fixedAfterName = entryFixedSize(format) - ENTRY_NAME_OFFSET;
  const minOffset = dataStart(format);
  const localStop = stop - base;
  const v3 = format.version === 3;
  const withLayout = format.withLayout;
  let cur = indexStart - base;
  // One latin1 string of the whole index: ASCII names are sliced out of it (no decode each).
  const textStart = cur;
  const text = count > 0 ? latin1Text(bytes, textStart, localStop) : null;
  const names: string[] = new Array(count);
  const fileOffsets = new Float64Array(count);
  const dataSizes = new Float64Array(count);
  const seeds = new Uint32Array(count);
  const fingerprints = v3 ? new Uint32Array(count) : null;
  const crc32cs = v3 ? new Uint32Array(count) : null;
  const layouts: Array<PackingLayout | undefined> | null = withLayout ? new Array(count) : null;
  let layout: PackingLayout | undefined;
  let i = 0;
  for (; i < count; i++) {
    if (cur + ENTRY_NAME_OFFSET > localStop) {
      const message = `truncated index: it ends after ${i} of ${count} entries`;
      if (tolerated === null) throw new XpwcFormatError('ERR_XPWC_TRUNCATED', message, base + cur);
      tolerated.push({ code: 'ERR_XPWC_TRUNCATED', message, offset: base + cur });
      // The 0..3 bytes left are ignored, as ExecuTorch does.
      return columnsOf(i, names, fileOffsets, dataSizes, seeds, fingerprints, crc32cs, layouts);
    }
    const nameLen = dv.getUint32(cur, true);
    if (nameLen > MAX_NAME_LENGTH) {
      throw new XpwcFormatError(
        'ERR_XPWC_LIMIT',
        `entry ${i}: name_len ${nameLen} exceeds MAX_NAME_LENGTH (${MAX_NAME_LENGTH})`,
        base + cur,
      );
    }
    const nameStart = cur + ENTRY_NAME_OFFSET;
    const p = nameStart + nameLen;
    if (p + fixedAfterName > localStop) {
      throw new XpwcFormatError(
        'ERR_XPWC_TRUNCATED',
        `entry ${i}: name_len ${nameLen} runs past the end of the index`,
        base + cur,
      );
    }
    const ascii = text === null ? null : text.slice(nameStart - textStart, p - textStart);
    const name =
      ascii !== null && !NON_ASCII.test(ascii)
        ? ascii
        : nameFromBytes(bytes.subarray(nameStart, p));
    const fileOffset = readU64(dv, p + F.fileOffset);
    const dataSize = readU64(dv, p + F.dataSize);
    if (!(fileOffset >= minOffset && fileOffset < indexStart)) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i} ${JSON.stringify(name)}: file_offset ${fileOffset} is outside the data region [${minOffset}, ${indexStart})`,
        base + p + F.fileOffset,
      );
    }
    if (dataSize > indexStart - fileOffset) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i} ${JSON.stringify(name)}: data_size ${dataSize} at ${fileOffset} runs past index_start ${indexStart}`,
        base + p + F.dataSize,
      );
    }
    names[i] = name;
    fileOffsets[i] = fileOffset;
    dataSizes[i] = dataSize;
    seeds[i] = dv.getUint32(p + F.seed, true);
    if (v3) {
      (fingerprints as Uint32Array)[i] = dv.getUint32(p + F.fingerprint, true);
      (crc32cs as Uint32Array)[i] = dv.getUint32(p + F.crc32c, true);
      if (withLayout) {
        // Equal consecutive layouts share one frozen object; an all-zero record is none.
        const own = readPackingLayoutShared(dv, p + F.layout, layout);
        if (own !== undefined) layout = own;
        (layouts as Array<PackingLayout | undefined>)[i] = own;
      }
    }
    cur = p + fixedAfterName;
  }
  if (cur !== localStop) {
    const message = `${localStop - cur} unexpected bytes between the last entry and the ${format.version === 2 ? 'footer' : 'identity'}`;
    if (tolerated === null) {
      throw new XpwcFormatError('ERR_XPWC_TRAILING_BYTES', message, base + cur);
    }
    tolerated.push({ code: 'ERR_XPWC_TRAILING_BYTES', message, offset: base + cur });
  }
  return columnsOf(i, names, fileOffsets, dataSizes, seeds, fingerprints, crc32cs, layouts);
}

/** The columns cut to the `length` entries decoded (fewer than allocated in a truncated index). */
function columnsOf(
  length: number,
  names: string[],
  fileOffsets: Float64Array,
  dataSizes: Float64Array,
  seeds: Uint32Array,
  fingerprints: Uint32Array | null,
  crc32cs: Uint32Array | null,
  layouts: Array<PackingLayout | undefined> | null,
): EntryColumns {
  if (length === names.length) {
    return { length, names, fileOffsets, dataSizes, seeds, fingerprints, crc32cs, layouts };
  }
  return {
    length,
    names: names.slice(0, length),
    fileOffsets: fileOffsets.subarray(0, length),
    dataSizes: dataSizes.subarray(0, length),
    seeds: seeds.subarray(0, length),
    fingerprints: fingerprints?.subarray(0, length) ?? null,
    crc32cs: crc32cs?.subarray(0, length) ?? null,
    layouts: layouts?.slice(0, length) ?? null,
  };
}

/**
 * A trailer's `entries`: entriesOfColumns(columns), made on the first call and kept (a
 * loader reads the columns, so most decodes never make the objects).
 */
export function entriesWhenRead<Entry extends XpwcEntryV2>(columns: EntryColumns): () => Entry[] {
  let entries: Entry[] | undefined;
  return () => {
    entries ??= entriesOfColumns(columns) as Entry[];
    return entries;
  };
}

/** The entries of `columns` as objects (in index order), as a trailer's `entries` gives them. */
function entriesOfColumns(columns: EntryColumns): Array<XpwcEntryV2 | XpwcEntryV3> {
  const { length, names, fileOffsets, dataSizes, seeds, fingerprints, crc32cs, layouts } = columns;
  const entries: Array<XpwcEntryV2 | XpwcEntryV3> = new Array(length);
  for (let i = 0; i < length; i++) {
    const name = names[i] as string;
    const fileOffset = fileOffsets[i] as number;
    const dataSize = dataSizes[i] as number;
    const seed = seeds[i] as number;
    if (fingerprints === null || crc32cs === null) {
      entries[i] = { name, fileOffset, dataSize, seed };
      continue;
    }
    const fingerprint = fingerprints[i] as number;
    const crc32c = crc32cs[i] as number;
    const layout = layouts?.[i];
    entries[i] =
      layout === undefined
        ? { name, fileOffset, dataSize, seed, fingerprint, crc32c }
        : { name, fileOffset, dataSize, seed, fingerprint, crc32c, layout };
  }
  return entries;
}

/** The entries' names as bytes and the index size, validated with the decoder's rules. */
export interface PreparedEntries {
  readonly names: Uint8Array[];
  readonly layouts: Array<PackingLayout | undefined>;
  /** Index bytes; above MAX_TRAILER_BYTES when the entries would not fit (checked by the caller). */
  readonly size: number;
}

/** Validates `entries` for an index at `indexStart` and measures it, before anything is allocated. */
export function prepareEntries(
  entries: readonly (XpwcEntryV2 | XpwcEntryV3)[],
  format: EntryFormat,
  indexStart: number,
): PreparedEntries {
  const fixed = entryFixedSize(format);
  const minOffset = dataStart(format);
  const names: Uint8Array[] = new Array(entries.length);
  const layouts: Array<PackingLayout | undefined> = new Array(entries.length);
  let size = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e === null || typeof e !== 'object') throw invalidArgument(`entry ${i} must be an object`);
    names[i] = encodeName(e.name, i);
    if (!isSafeOffset(e.fileOffset) || !isSafeOffset(e.dataSize)) {
      throw invalidArgument(
        `entry ${i}: fileOffset and dataSize must be non-negative safe integers`,
      );
    }
    if (!(e.fileOffset >= minOffset && e.fileOffset < indexStart)) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i}: fileOffset ${e.fileOffset} is outside the data region [${minOffset}, ${indexStart})`,
      );
    }
    if (e.dataSize > indexStart - e.fileOffset) {
      throw new XpwcFormatError(
        'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
        `entry ${i}: dataSize ${e.dataSize} at ${e.fileOffset} runs past indexStart ${indexStart}`,
      );
    }
    if (!isU32(e.seed)) throw invalidArgument(`entry ${i}: seed must be a u32`);
    if (format.version === 3) {
      const e3 = e as XpwcEntryV3;
      if (!isU32(e3.fingerprint)) throw invalidArgument(`entry ${i}: fingerprint must be a u32`);
      if (!isU32(e3.crc32c)) throw invalidArgument(`entry ${i}: crc32c must be a u32`);
      if (e3.layout != null) layouts[i] = checkPackingLayout(e3.layout, `entry ${i}`);
    }
    size += fixed + (names[i] as Uint8Array).length;
    if (size > MAX_TRAILER_BYTES) break; // reported by the caller, before allocating
  }
  return { names, layouts, size };
}

function encodeName(name: unknown, i: number): Uint8Array {
  if (typeof name !== 'string') throw invalidArgument(`entry ${i} name must be a string`);
  // Each UTF-16 code unit takes at least one byte: reject a long string before encoding it.
  if (name.length > MAX_NAME_LENGTH) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `entry ${i} name is longer than MAX_NAME_LENGTH (${MAX_NAME_LENGTH} bytes)`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = nameToBytes(name);
  } catch (e) {
    if (e instanceof XpwcFormatError) throw invalidArgument(`entry ${i} name: ${e.message}`);
    throw e;
  }
  if (bytes.length > MAX_NAME_LENGTH) {
    throw new XpwcFormatError(
      'ERR_XPWC_LIMIT',
      `entry ${i} name is ${bytes.length} bytes, more than MAX_NAME_LENGTH (${MAX_NAME_LENGTH})`,
    );
  }
  return bytes;
}

/** Writes the prepared entries at out[0..]; returns the offset just past the last one. */
export function writeEntries(
  out: Uint8Array,
  entries: readonly (XpwcEntryV2 | XpwcEntryV3)[],
  prepared: PreparedEntries,
  format: EntryFormat,
): number {
  const dv = viewOf(out);
  const F = ENTRY_FIELDS;
  const fixedAfterName = entryFixedSize(format) - ENTRY_NAME_OFFSET;
  let p = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as XpwcEntryV3;
    const name = prepared.names[i] as Uint8Array;
    dv.setUint32(p, name.length, true);
    out.set(name, p + ENTRY_NAME_OFFSET);
    p += ENTRY_NAME_OFFSET + name.length;
    writeU64(dv, p + F.fileOffset, e.fileOffset);
    writeU64(dv, p + F.dataSize, e.dataSize);
    dv.setUint32(p + F.seed, e.seed, true);
    if (format.version === 3) {
      dv.setUint32(p + F.fingerprint, e.fingerprint, true);
      dv.setUint32(p + F.crc32c, e.crc32c, true);
      if (format.withLayout) writePackingLayout(dv, p + F.layout, prepared.layouts[i]);
    }
    p += fixedAfterName;
  }
  return p;
}
