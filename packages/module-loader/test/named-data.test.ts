import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  ContentKeyedDataMap,
  encodeSafetensors,
  MappedTensorView,
  parseSafetensorsHeader,
  SafetensorsFile,
  SafetensorsNamedDataMap,
} from '../src/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-named-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function weights(name: string, tensors: Record<string, number[]>): SafetensorsFile {
  const path = join(dir, name);
  writeFileSync(
    path,
    encodeSafetensors(
      Object.entries(tensors).map(([tensor, values]) => ({
        name: tensor,
        shape: [values.length],
        data: Float32Array.from(values),
      })),
    ),
  );
  return SafetensorsFile.open(path);
}

describe('named data by name and by content', () => {
  test('look-ups in file order, out of order, and of names no file holds', () => {
    const named = new SafetensorsNamedDataMap([
      weights('a.safetensors', { a0: [1, 2], a1: [3, 4] }),
      weights('b.safetensors', { b0: [5, 6], b1: [1, 2] }),
    ]);
    expect(
      ['b1', 'a0', 'a1', 'b0', 'b1', 'a0'].map((name) => named.info(name)?.fileOffset),
    ).toEqual([
      named.fileOf('b1').tensors.get('b1')?.fileOffset,
      named.fileOf('a0').tensors.get('a0')?.fileOffset,
      named.fileOf('a1').tensors.get('a1')?.fileOffset,
      named.fileOf('b0').tensors.get('b0')?.fileOffset,
      named.fileOf('b1').tensors.get('b1')?.fileOffset,
      named.fileOf('a0').tensors.get('a0')?.fileOffset,
    ]);
    expect([...(named.get('b0')?.data ?? [])]).toEqual([5, 6]);
    expect(named.info('nope')).toBe(undefined);
    expect(() => named.fileOf('nope')).toThrow(
      expect.objectContaining({ code: 'ERR_MANIFEST_INVALID' }),
    );
    named.close();
  });

  test('equal bytes share a key; keys are found in added order, out of order, and listed once', () => {
    const named = new SafetensorsNamedDataMap([
      weights('a.safetensors', { a0: [1, 2], a1: [3, 4] }),
      weights('b.safetensors', { b0: [1, 2] }),
    ]);
    const keyed = new ContentKeyedDataMap(named);
    const keys = ['a0', 'a1', 'b0'].map((name) => keyed.add(name));
    expect(keys[0]).toBe(keys[2]);
    expect(keys[0]).not.toBe(keys[1]);
    expect([...(keyed.names() as Iterable<string>)]).toEqual([keys[0], keys[1]]);
    // In added order, then out of order, then a key no tensor has.
    expect(keys.map((key) => [...(keyed.get(key)?.data ?? [])])).toEqual([
      [1, 2],
      [3, 4],
      [1, 2],
    ]);
    expect([...(keyed.get(keys[1] as string)?.data ?? [])]).toEqual([3, 4]);
    expect([...(keyed.get(keys[0] as string)?.data ?? [])]).toEqual([1, 2]);
    expect(keyed.get('0'.repeat(64))).toBe(undefined);
    // Added after the index was made: still found.
    const again = keyed.add('a1');
    expect(again).toBe(keys[1]);
    expect([...(keyed.names() as Iterable<string>)]).toHaveLength(2);
    named.close();
  });

  test('views by content are made per look-up from the table columns and match the header', () => {
    const path = join(dir, 'm.safetensors');
    writeFileSync(
      path,
      encodeSafetensors([
        { name: 'w', shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
        { name: 'b', shape: [2], data: Float32Array.from([7, 8]) },
      ]),
    );
    const bytes = readFileSync(path);
    const header = parseSafetensorsHeader(bytes, bytes.byteLength, path);
    const named = new SafetensorsNamedDataMap([SafetensorsFile.open(path)]);
    const keyed = new ContentKeyedDataMap(named);
    const [w, b] = ['w', 'b'].map((name) => keyed.add(name)) as [string, string];
    const first = keyed.get(w) as MappedTensorView;
    const again = keyed.get(w) as MappedTensorView;
    expect(first).toBeInstanceOf(MappedTensorView);
    // A fresh view each time (the cache holds one per layer, then lets it go).
    expect(again).not.toBe(first);
    expect(first.shape).toEqual([2, 3]);
    expect(first.info).toEqual(header.tensors[0]);
    expect([...first.data]).toEqual([1, 2, 3, 4, 5, 6]);
    const bias = keyed.get(b) as MappedTensorView;
    expect(bias.shape).toEqual([2]);
    expect([...bias.data]).toEqual([7, 8]);
    // By name: the same view each time, with the same facts.
    expect(named.get('w')).toBe(named.get('w'));
    expect(named.get('w')?.info).toEqual(header.tensors[0]);
    named.close();
    expect(keyed.get(w)).toBe(undefined);
    expect([...first.data]).toEqual([]);
  });

  test("a file's table gives infos equal to the header", () => {
    const path = join(dir, 'm.safetensors');
    writeFileSync(
      path,
      encodeSafetensors([
        { name: 'a', shape: [2, 1, 3], data: new Float32Array(6) },
        { name: 'b', shape: [], data: new Float32Array(1) },
        { name: 'c', shape: [0], data: new Float32Array(0) },
      ]),
    );
    const bytes = readFileSync(path);
    const header = parseSafetensorsHeader(bytes, bytes.byteLength, path);
    const file = SafetensorsFile.open(path);
    const table = file.table;
    expect(header.tensors.map((_, i) => table.info(i).shape)).toEqual([[2, 1, 3], [], [0]]);
    expect(table.info(1)).toEqual(header.tensors[1]);
    expect(table.info(1)).toBe(table.info(1));
    expect(table.infos()).toEqual(header.tensors);
    file.close();
  });
});
