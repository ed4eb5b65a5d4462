import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  encodeSafetensors,
  type KnownFile,
  SafetensorsFile,
  type SafetensorsTensorInfo,
  SOURCE_RECORD_WARNING,
  SourceRecord,
  sourceRecordPath,
  statIdentity,
  TensorTable,
} from '../src/index.js';
import { decodeTable, type EncodedTable, encodeTable } from '../src/safetensors/table-codec.js';
import { backdate } from './weights-programs.js';

let dir: string;
let warnings: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-record-'));
  warnings = [];
  vi.spyOn(process, 'emitWarning').mockImplementation(((message: string, options?: unknown) => {
    const code = (options as { code?: string } | undefined)?.code;
    if (code === SOURCE_RECORD_WARNING) warnings.push(message);
  }) as typeof process.emitWarning);
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const values = (count: number, seed: number) =>
  Float32Array.from({ length: count }, (_, i) => Math.sin(seed * 100 + i));

/** A weight file of `count` tensors named `${prefix}{i}`, modified a minute ago. */
function weightFile(name: string, count: number, prefix = 't'): string {
  const path = join(dir, name);
  const tensors = Array.from({ length: count }, (_, i) => ({
    name: `${prefix}${i}`,
    shape: i % 2 === 0 ? [3, 4] : [4],
    data: values(i % 2 === 0 ? 12 : 4, i),
  }));
  writeFileSync(path, encodeSafetensors(tensors));
  backdate(path);
  return realpathSync(path);
}

/** What a load learns of a file: its table and the digests of the first `hashed` tensors. */
function learn(path: string, hashed: number): KnownFile {
  const file = SafetensorsFile.open(path);
  try {
    for (const info of [...file.tensors.values()].slice(0, hashed)) file.digest(info);
    return file.describe();
  } finally {
    file.close();
  }
}

const cachePath = () => join(dir, 'cache.xpwc');
const recordJson = () => JSON.parse(readFileSync(sourceRecordPath(cachePath()), 'utf8'));

describe('the record next to a cache (version 2: tables in columns)', () => {
  test('a fresh reader recalls the table and digests written, nothing per tensor in the JSON', () => {
    const a = weightFile('a.safetensors', 6);
    const b = weightFile('b.safetensors', 3, 'ü/名前.');
    expect(new SourceRecord(cachePath()).save([learn(a, 4), learn(b, 3)])).toBe(true);
    const json = recordJson();
    expect(json).toMatchObject({ format: 'memlayer-weight-sources', version: 2 });
    expect(json.files.map((f: Record<string, unknown>) => Object.keys(f).sort())).toEqual([
      ['ctimeNs', 'dev', 'ino', 'mtimeNs', 'path', 'readAtNs', 'size', 'table'],
      ['ctimeNs', 'dev', 'ino', 'mtimeNs', 'path', 'readAtNs', 'size', 'table'],
    ]);

    const reader = new SourceRecord(cachePath());
    const known = reader.recall(statIdentity(a, { file: a, field: a })) as KnownFile;
    const header = SafetensorsFile.open(a, undefined, { trustMemory: false });
    expect(known.tensors).toEqual([...header.tensors.values()]);
    const bytes = readFileSync(a);
    const expected = [...header.tensors.values()]
      .slice(0, 4)
      .map((info) => [
        info.name,
        sha256Hex(bytes.subarray(info.fileOffset, info.fileOffset + info.byteLength)),
      ]);
    expect([...known.digests]).toEqual(expected);
    header.close();
    const other = reader.recall(statIdentity(b, { file: b, field: b })) as KnownFile;
    expect(other.tensors.map((t) => t.name)).toEqual(['ü/名前.0', 'ü/名前.1', 'ü/名前.2']);
    expect(other.digests.size).toBe(3);
    // Nothing new: no write.
    expect(reader.save([learn(a, 4)])).toBe(false);
    expect(warnings).toEqual([]);
  });

  test('a version 1 record is read, and rewritten as version 2 by the next save', () => {
    const a = weightFile('a.safetensors', 4);
    const known = learn(a, 4);
    const { identity } = known;
    writeFileSync(
      sourceRecordPath(cachePath()),
      JSON.stringify({
        format: 'memlayer-weight-sources',
        version: 1,
        files: [
          {
            path: identity.path,
            dev: String(identity.dev),
            ino: String(identity.ino),
            size: identity.size,
            mtimeNs: String(identity.mtimeNs),
            ctimeNs: String(identity.ctimeNs),
            readAtNs: String(known.readAtNs),
            tensors: known.tensors.map((t) => [
              t.name,
              t.dtype,
              t.shape,
              t.fileOffset,
              t.byteLength,
              known.digests.get(t.name) ?? null,
            ]),
          },
        ],
      }),
    );
    const record = new SourceRecord(cachePath());
    const recalled = record.recall(identity) as KnownFile;
    expect(recalled.tensors).toEqual(known.tensors);
    expect(recalled.digests).toEqual(known.digests);
    expect(recordJson().version).toBe(1);
    expect(record.save([recalled])).toBe(true);
    expect(recordJson().version).toBe(2);
    expect(new SourceRecord(cachePath()).recall(identity)?.digests).toEqual(known.digests);
    expect(warnings).toEqual([]);
  });

  test('a truncated record is ignored with a warning', () => {
    const a = weightFile('a.safetensors', 2);
    new SourceRecord(cachePath()).save([learn(a, 2)]);
    const text = readFileSync(sourceRecordPath(cachePath()), 'utf8');
    writeFileSync(sourceRecordPath(cachePath()), text.slice(0, text.length / 2));
    expect(new SourceRecord(cachePath()).recall(statIdentity(a, { file: a, field: a }))).toBe(
      undefined,
    );
    expect(warnings).toHaveLength(1);
  });

  type Table = EncodedTable;
  for (const [what, corrupt] of [
    ['missing a column', (table: Table) => ({ ...table, offsets: undefined })],
    ['short of digests', (table: Table) => ({ ...table, digests: table.digests.slice(8) })],
    [
      'past the end of its file',
      (table: Table) => ({ ...table, offsets: table.offsets.map((o) => o + 1e6) }),
    ],
    [
      'claiming a rank of 1e9',
      (table: Table) => ({ ...table, shapes: [1e9, ...table.shapes.slice(1)] }),
    ],
    [
      'naming a dtype of the prototype',
      (table: Table) => ({ ...table, dtypes: ['toString', ...table.dtypes.slice(1)] }),
    ],
  ] as const) {
    test(`a file whose table is ${what} is ignored with a warning; the others are recalled`, () => {
      const a = weightFile('a.safetensors', 8);
      const b = weightFile('b.safetensors', 2, 'u');
      new SourceRecord(cachePath()).save([learn(a, 8), learn(b, 2)]);
      const json = recordJson();
      json.files[0].table = corrupt(json.files[0].table as Table);
      writeFileSync(sourceRecordPath(cachePath()), JSON.stringify(json));
      const record = new SourceRecord(cachePath());
      expect(record.recall(statIdentity(a, { file: a, field: a }))).toBe(undefined);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(a);
      expect(record.recall(statIdentity(b, { file: b, field: b }))?.digests.size).toBe(2);
      // The next save drops the corrupt entry for good.
      expect(record.save([learn(b, 1), learn(weightFile('c.safetensors', 1), 1)])).toBe(true);
      expect(new SourceRecord(cachePath()).paths()).toEqual([
        b,
        realpathSync(join(dir, 'c.safetensors')),
      ]);
    });
  }

  test('a table that would lead a view outside its file is refused', () => {
    const table = TensorTable.fromInfos([
      { name: 'weight', dtype: 'F32', shape: [4, 4], fileOffset: 64, byteLength: 64 },
    ]);
    const encoded = encodeTable(table);
    expect(encoded).toMatchObject({
      names: ['weight'],
      shapes: [2, 4, 4],
      offsets: [64],
      hashed: '0',
    });
    expect(decodeTable(encoded, 128).info(0)).toMatchObject({ shape: [4, 4], byteLength: 64 });
    expect(() => decodeTable(encoded, 127)).toThrow(/tensor 0/);
    expect(() => decodeTable({ ...encoded, shapes: [2, 4, 4.5] }, 1e6)).toThrow(/tensor 0/);
    expect(() => decodeTable({ ...encoded, shapes: [3, 4, 4] }, 1e6)).toThrow(/tensor 0/);
    expect(() => decodeTable({ ...encoded, hashed: '1' }, 128)).not.toThrow();
    expect(() => decodeTable({ ...encoded, hashed: '2' }, 128)).toThrow(/columns/);
  });
});

describe('table columns', () => {
  const dtypes = ['F32', 'F16', 'BF16', 'I64', 'BOOL', 'U8', 'F64'] as const;
  const info = fc
    .record({
      name: fc.string({ minLength: 1, maxLength: 40, unit: 'binary' }),
      dtype: fc.constantFrom(...dtypes),
      shape: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 4 }),
      fileOffset: fc.integer({ min: 8, max: 1 << 20 }),
    })
    .map(({ name, dtype, shape, fileOffset }) => {
      const bytes = { F32: 4, F16: 2, BF16: 2, I64: 8, BOOL: 1, U8: 1, F64: 8 }[dtype];
      const byteLength = shape.reduce((p, s) => p * s, 1) * bytes;
      return { name, dtype, shape, fileOffset, byteLength } as SafetensorsTensorInfo;
    });
  const digest = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined });
  const SIZE = 2 << 20;

  test('encode then decode gives back every tensor and digest', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(info, digest), { maxLength: 30 }), (rows) => {
        // Names are unique in a file.
        const unique = [...new Map(rows.map((row) => [row[0].name, row])).values()];
        const digests = new Map<string, string>();
        for (const [tensor, hex] of unique) if (hex !== undefined) digests.set(tensor.name, hex);
        const infos = unique.map(([tensor]) => tensor);
        const decoded = decodeTable(encodeTable(TensorTable.fromInfos(infos, digests)), SIZE);
        expect(decoded.infos()).toEqual(infos);
        expect(decoded.digestMap()).toEqual(digests);
        expect(decoded.digestCount).toBe(digests.size);
      }),
      { numRuns: 200 },
    );
  });

  test('any damage gives a plain Error or a table whose tensors all lie inside the file', () => {
    fc.assert(
      fc.property(
        fc.array(info, { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 1 << 21 })), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.nat(),
        (infos, flips, cut) => {
          // Damage as JSON can carry it: other numbers, strings or nulls in any column.
          const encoded = encodeTable(TensorTable.fromInfos(infos)) as unknown as Record<
            string,
            unknown
          >;
          const columns = ['names', 'dtypes', 'shapes', 'offsets'] as const;
          const damaged = JSON.parse(JSON.stringify(encoded));
          for (const [at, value] of flips) {
            const column = damaged[columns[at % 4] as string] as unknown[];
            const replacement = [value, -value, value / 7, 'F32', null, '', 2 ** 60][at % 7];
            column[(at >> 2) % column.length] = replacement;
          }
          if (cut % 3 === 0) damaged.digests = (damaged.digests as string).slice(cut % 5);
          let table: TensorTable;
          try {
            table = decodeTable(damaged, SIZE);
          } catch (error) {
            expect(error).toBeInstanceOf(Error);
            expect((error as Error).constructor).toBe(Error);
            return;
          }
          for (const tensor of table.infos()) {
            expect(tensor.fileOffset).toBeGreaterThanOrEqual(8);
            expect(tensor.fileOffset + tensor.byteLength).toBeLessThanOrEqual(SIZE);
            expect(tensor.name.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
