// v2 files built byte by byte the way ExecuTorch's XNNWeightsCache writes them
// (save_packed_index: each region at a page-aligned offset, rounded up to a page; the trailer at
// the end of the last region; records in unordered_map iteration order; names are raw bytes),
// and the defects its loader (load_packed_cache) tolerates, read with `lenient`.
import { describe, expect, it } from 'vitest';
import {
  decodeTrailer,
  encodeTrailer,
  lintTrailer,
  readFooter,
  readTrailer,
  type TrailerV2,
  V2_FOOTER_SIZE,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { ByteWriter } from './support/raw.js';

const PAGE = 4096;

interface EtRecord {
  name: number[];
  /** Index of the region (in allocation order) the record points at. */
  region: number;
  dataSize: number;
  seed: number;
}

/**
 * A file as ExecuTorch lays it out: regions of `sizes` bytes, each at the next page boundary and
 * rounded up to a page, then the records in the given (hash-map) order and the 20-byte footer.
 * `entryCount`/`cutIndex`/`extra` produce the defects its loader tolerates.
 */
function etFile(
  sizes: number[],
  records: EtRecord[],
  o: { entryCount?: number; cutIndex?: number; extra?: number[] } = {},
): Uint8Array {
  const w = new ByteWriter();
  const offsets: number[] = [];
  for (const [i, size] of sizes.entries()) {
    offsets.push(w.length);
    const mapSize = Math.ceil(size / PAGE) * PAGE;
    w.bytes(Array.from({ length: mapSize }, (_, k) => (k < size ? (i * 31 + k) & 0xff : 0)));
  }
  const indexStart = w.length;
  const index = new ByteWriter();
  for (const r of records) {
    index.u32(r.name.length).bytes(r.name);
    index
      .u64(offsets[r.region] as number)
      .u64(r.dataSize)
      .u32(r.seed);
  }
  const indexBytes = Array.from(index.toBytes()).slice(0, o.cutIndex ?? index.length);
  w.bytes(indexBytes).bytes(o.extra ?? []);
  w.u64(indexStart)
    .u32(o.entryCount ?? records.length)
    .u32(0x58505743)
    .u32(2);
  return w.toBytes();
}

const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
const SHA_A = ascii('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08');
// Hash-map order: not sorted by name or by offset.
const RECORDS: EtRecord[] = [
  { name: [0xff, 0xfe, 0x41], region: 2, dataSize: 100, seed: 0xdeadbeef },
  { name: SHA_A, region: 0, dataSize: 5000, seed: 63 },
  { name: [0x62, 0xc3, 0x28], region: 1, dataSize: 4096, seed: 59 }, // c3 28: broken UTF-8
];
const SIZES = [5000, 4096, 100];

describe('files as ExecuTorch writes them', () => {
  const file = etFile(SIZES, RECORDS);

  it('decode strictly, in file order, non-UTF-8 names escaped', () => {
    const t = decodeTrailer(file, file.length) as TrailerV2;
    expect(t.tolerated).toEqual([]);
    expect(t.entries).toEqual([
      { name: '\uDCFF\uDCFEA', fileOffset: 3 * PAGE, dataSize: 100, seed: 0xdeadbeef },
      { name: String.fromCharCode(...SHA_A), fileOffset: 0, dataSize: 5000, seed: 63 },
      { name: 'b\uDCC3(', fileOffset: 2 * PAGE, dataSize: 4096, seed: 59 },
    ]);
  });

  it('re-encoding the decoded entries gives back the same bytes (names as bytes)', () => {
    const t = decodeTrailer(file, file.length);
    const bytes = encodeTrailer(t.entries, { version: 2, indexStart: t.indexStart });
    expect(bytes).toEqual(file.subarray(t.indexStart));
  });

  it('readTrailer reads it through a range callback; lint finds nothing to say', () => {
    const { trailer, commit } = readTrailer((at, n) => file.subarray(at, at + n), file.length);
    expect(commit).toBeNull();
    expect(trailer.entries).toHaveLength(3);
    expect(lintTrailer(trailer, PAGE)).toEqual([]);
  });
});

describe('what ExecuTorch tolerates: strict rejects, lenient reads and reports', () => {
  const lenient = { lenient: true } as const;

  it('a file that is only the 20-byte footer, 0 entries', () => {
    const file = new ByteWriter().u64(0).u32(0).u32(0x58505743).u32(2).toBytes();
    expect(file.length).toBe(V2_FOOTER_SIZE);
    expectError(() => decodeTrailer(file, 20), 'ERR_XPWC_BAD_INDEX_START', 0);
    expectError(() => readTrailer(file, 20), 'ERR_XPWC_BAD_INDEX_START', 0);
    const t = decodeTrailer(file, 20, lenient) as TrailerV2;
    expect(t.entries).toEqual([]);
    expect(t.tolerated).toEqual([
      expect.objectContaining({ code: 'ERR_XPWC_BAD_INDEX_START', offset: 0 }),
    ]);
    expect(readTrailer(file, 20, lenient).trailer).toEqual(t);
    expect(readFooter(file, 20, lenient)).toMatchObject({ indexStart: 0, entryCount: 0 });
    const warnings = lintTrailer(t);
    expect(warnings.map((w) => [w.code, w.issue?.code])).toEqual([
      ['WARN_XPWC_TOLERATED', 'ERR_XPWC_BAD_INDEX_START'],
    ]);
  });

  it('an empty index after data regions (no entry was file-backed)', () => {
    const file = etFile([100], []);
    expectError(() => decodeTrailer(file, file.length), 'ERR_XPWC_BAD_INDEX_START');
    const t = decodeTrailer(file, file.length, lenient) as TrailerV2;
    expect(t.entries).toEqual([]);
    expect(t.indexStart).toBe(PAGE);
    expect(t.tolerated.map((i) => i.code)).toEqual(['ERR_XPWC_BAD_INDEX_START']);
  });

  it('a short index: entry_count says more records than the bytes hold', () => {
    const file = etFile(SIZES, RECORDS.slice(0, 2), { entryCount: 3 });
    const err = expectError(() => decodeTrailer(file, file.length), 'ERR_XPWC_TRUNCATED');
    expect(err.message).toMatch(/truncated index/);
    const t = decodeTrailer(file, file.length, lenient) as TrailerV2;
    expect(t.entries.map((e) => e.seed)).toEqual([0xdeadbeef, 63]);
    // The columns hold the two records decoded, not the three entry_count promised.
    expect(t.columns.length).toBe(2);
    expect([...t.columns.seeds]).toEqual([0xdeadbeef, 63]);
    expect(t.columns.names).toEqual(t.entries.map((e) => e.name));
    expect([...t.columns.fileOffsets]).toEqual(t.entries.map((e) => e.fileOffset));
    expect(t.tolerated).toEqual([
      {
        code: 'ERR_XPWC_TRUNCATED',
        message: expect.stringMatching(/2 of 3/),
        offset: file.length - 20,
      },
    ]);
    expect(lintTrailer(t, PAGE).map((w) => w.code)).toEqual(['WARN_XPWC_TOLERATED']);
  });

  it('a short index with 1 to 3 stray bytes before the footer (fewer than a name_len)', () => {
    for (const stray of [1, 2, 3]) {
      const file = etFile(SIZES, RECORDS.slice(0, 1), {
        entryCount: 2,
        extra: [7, 7, 7].slice(0, stray),
      });
      expectError(() => decodeTrailer(file, file.length), 'ERR_XPWC_TRUNCATED');
      const t = decodeTrailer(file, file.length, lenient) as TrailerV2;
      expect(t.entries).toHaveLength(1);
      expect(t.tolerated.map((i) => i.code)).toEqual(['ERR_XPWC_TRUNCATED']);
    }
  });

  it('bytes after the last of entry_count records', () => {
    const file = etFile(SIZES, RECORDS, { extra: [1, 2, 3, 4, 5] });
    expectError(() => decodeTrailer(file, file.length), 'ERR_XPWC_TRAILING_BYTES');
    const t = decodeTrailer(file, file.length, lenient) as TrailerV2;
    expect(t.entries).toHaveLength(3);
    expect(t.tolerated).toEqual([
      expect.objectContaining({ code: 'ERR_XPWC_TRAILING_BYTES', offset: file.length - 25 }),
    ]);
  });

  it('lenient still rejects what ExecuTorch rejects', () => {
    // A record whose name_len is readable but whose fields run into the footer.
    const cut = etFile(SIZES, RECORDS, { cutIndex: 4 + 3 + 10 });
    expectError(() => decodeTrailer(cut, cut.length, lenient), 'ERR_XPWC_TRUNCATED');
    // Data past index_start.
    const oob = etFile(SIZES, [{ ...(RECORDS[0] as EtRecord), dataSize: PAGE + 1 }]);
    expectError(() => decodeTrailer(oob, oob.length, lenient), 'ERR_XPWC_ENTRY_OUT_OF_BOUNDS');
    // index_start past the footer.
    const bad = etFile([100], RECORDS.slice(0, 0));
    const view = new DataView(bad.buffer);
    view.setUint32(bad.length - 20, bad.length, true);
    expectError(() => decodeTrailer(bad, bad.length, lenient), 'ERR_XPWC_BAD_INDEX_START');
    expectError(() => decodeTrailer(bad.subarray(-19), 19, lenient), 'ERR_XPWC_TRUNCATED', 0);
    expectError(
      () => decodeTrailer(bad, bad.length, { lenient: 'yes' as unknown as boolean }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
  });
});
