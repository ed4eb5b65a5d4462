// The addon's XNNGraph reader on small hand-built flatbuffers: the columns of a valid graph,
// a description (never a crash or a read out of bounds) of a malformed one, and argument
// errors. module-loader's tests compare it with the JavaScript reader on mutated programs.
import { describe, expect, it } from 'vitest';
import { tryLoadAddon } from '../src/backends/posix/addon.js';
import { loadXnnGraphReader, type XnnGraphColumns, type XnnGraphReader } from '../src/index.js';
import { expectArgumentError } from './helpers.js';
import { buildGraph, constant, graph, mark, node, tensorValue } from './xnn-graph-builder.js';

/** Linux builds the addon here: its absence is a failure, not a skip. */
function reader(): XnnGraphReader {
  const loaded = loadXnnGraphReader();
  if (loaded === null) throw new Error('the addon has no XNNGraph reader: build it first');
  return loaded;
}

const FULLY_CONNECTED = 2;
const CLAMP = 6;
const INVALID = 0xffffffff;

/** input (10) → fully connected with filter (20, constant 1), no bias → out (30) → clamp → q (40). */
function validGraph() {
  return buildGraph(
    mark(
      'graph',
      graph({
        values: [
          tensorValue(10, [1, 3], { external: 0, flags: 1 }),
          tensorValue(20, [2, 3], { constant: 1 }),
          mark('out', tensorValue(30, [1, 2])),
          tensorValue(40, [1, 2], { external: 1, flags: 2, quantized: true }),
        ],
        nodes: [node(FULLY_CONNECTED, [10, 20, INVALID, 30, 5]), node(CLAMP, [30, 40, 0], [0, 6])],
        inputs: [10],
        outputs: [40],
        constants: [
          mark('constants', constant('')),
          constant('weight-1'),
          constant(),
          constant('clé'),
        ],
      }),
    ),
  );
}

function read(bytes: Uint8Array): XnnGraphColumns {
  const columns = reader().read(bytes);
  if (typeof columns === 'string') throw new Error(`refused: ${columns}`);
  return columns;
}

describe('the XNNGraph reader', () => {
  it('reads every column of a valid graph, ids as value indices', () => {
    const columns = read(validGraph().bytes);
    expect(Array.from(columns.nodeType)).toEqual([FULLY_CONNECTED, CLAMP]);
    expect(Array.from(columns.nodeInput)).toEqual([0, 2]);
    expect(Array.from(columns.nodeFilter)).toEqual([1, INVALID]);
    expect(Array.from(columns.nodeBias)).toEqual([INVALID, INVALID]);
    expect(Array.from(columns.nodeOutput)).toEqual([2, 3]);
    expect(Array.from(columns.nodeFlags)).toEqual([5, 0]);
    expect(Array.from(columns.outputMin)).toEqual([Number.NEGATIVE_INFINITY, 0]);
    expect(Array.from(columns.outputMax)).toEqual([Number.POSITIVE_INFINITY, 6]);
    expect(Array.from(columns.datatype)).toEqual([1, 1, 1, 1]);
    expect(Array.from(columns.quantized)).toEqual([0, 0, 0, 1]);
    expect(Array.from(columns.constantIndex)).toEqual([0, 1, 0, 0]);
    expect(Array.from(columns.externalId)).toEqual([0, INVALID, INVALID, 1]);
    expect(Array.from(columns.valueFlags)).toEqual([1, 0, 0, 2]);
    expect(Array.from(columns.dimStart)).toEqual([0, 2, 4, 6, 8]);
    expect(Array.from(columns.dims)).toEqual([1, 3, 2, 3, 1, 2, 1, 2]);
    expect(Array.from(columns.inputIds)).toEqual([0]);
    expect(Array.from(columns.outputIds)).toEqual([3]);
    expect(columns.constantCount).toBe(4);
    // ASCII keys are read; no key is null; others are left to the caller.
    expect([0, 1, 2, 3].map((i) => columns.namedKey(i))).toEqual(['', 'weight-1', null, undefined]);
  });

  it('refuses every truncation of a valid graph but one that cuts only constant entries', () => {
    const { bytes, marks } = validGraph();
    // Constant entries come last; the caller reads (and refuses) a cut one on use.
    const firstEntry = marks.get('constants') as number;
    for (let length = 0; length < bytes.length; length++) {
      const result = reader().read(bytes.subarray(0, length));
      if (typeof result === 'string') continue;
      expect(length, 'a cut before the constant entries').toBeGreaterThan(firstEntry - 16);
      expect(result.namedKey(3)).toBeUndefined();
    }
  });

  it.each([
    ['a wrong identifier', (b: Uint8Array) => b.set([88, 78, 48, 50], 4), /identifier/],
    [
      'a root outside the buffer',
      (b: Uint8Array) => view(b).setUint32(0, b.length, true),
      /XNNGraph/,
    ],
    [
      'a root vtable outside the buffer',
      (b: Uint8Array) => view(b).setInt32(view(b).getUint32(0, true), -b.length, true),
      /XNNGraph/,
    ],
    [
      'a value vtable too short',
      (b: Uint8Array, at: number) => setVtableSize(b, at, 2),
      /XNNTensorValue|XValue/,
    ],
  ])('refuses %s, naming the table', (_, mutate, message) => {
    const { bytes, marks } = validGraph();
    mutate(bytes, marks.get('out') as number);
    expect(reader().read(bytes)).toMatch(message);
  });

  it('refuses a vector that runs past the end, naming it', () => {
    const { bytes, marks } = validGraph();
    const graphAt = marks.get('graph') as number;
    // xvalues is the graph's second field, in the table's second 4-byte slot.
    const field = graphAt + 8;
    view(bytes).setUint32(field + view(bytes).getUint32(field, true), 0x40000000, true);
    expect(reader().read(bytes)).toMatch(/XNNGraph\.xvalues/);
  });

  it('refuses repeated ids and ids no value has', () => {
    const twice = buildGraph(
      graph({
        values: [tensorValue(7, [1]), tensorValue(7, [1])],
        nodes: [],
        inputs: [],
        outputs: [],
        constants: [],
      }),
    );
    expect(reader().read(twice.bytes)).toMatch(/id_out 7/);
    const missing = buildGraph(
      graph({ values: [tensorValue(0, [1])], nodes: [], inputs: [3], outputs: [], constants: [] }),
    );
    expect(reader().read(missing.bytes)).toMatch(/input_ids: no value has id 3/);
  });

  it('refuses more dims in all than the buffer has bytes (values sharing one vector)', () => {
    const values = Array.from({ length: 40 }, (_, i) =>
      mark(`v${i}`, tensorValue(i, i === 39 ? new Array<number>(1000).fill(7) : [1])),
    );
    const { bytes, marks } = buildGraph(
      graph({ values, nodes: [], inputs: [], outputs: [], constants: [] }),
    );
    const dimsField = (value: number) => {
      const union = fieldAt(bytes, marks.get(`v${value}`) as number, 1);
      return fieldAt(bytes, union + view(bytes).getUint32(union, true), 2);
    };
    const shared = dimsField(39) + view(bytes).getUint32(dimsField(39), true);
    const share = (value: number) =>
      view(bytes).setUint32(dimsField(value), shared - dimsField(value), true);
    // Three values share the last one's 1000 dims: read, each with its own copy.
    for (const value of [0, 1, 2]) share(value);
    const columns = read(bytes);
    expect(columns.dims.length).toBe(4036);
    expect(Array.from(columns.dims.subarray(columns.dimStart[1], columns.dimStart[2]))).toEqual(
      new Array<number>(1000).fill(7),
    );
    // All of them: 40 000 dims from a buffer of a few thousand bytes.
    for (let value = 3; value < 39; value++) share(value);
    expect(reader().read(bytes)).toMatch(/XNNTensorValue\.dims: 40000 dims in all/);
  });

  it('leaves a malformed constant entry to the caller', () => {
    const { bytes } = buildGraph(
      graph({
        values: [],
        nodes: [],
        inputs: [],
        outputs: [],
        constants: [mark('bad', constant('key'))],
      }),
    );
    const columns = read(bytes);
    expect(columns.namedKey(0)).toBe('key');
    const text = bytes.length - 8; // the key's u32 length: 'key', its NUL, padding
    view(bytes).setUint32(text, 1000, true);
    expect(read(bytes).namedKey(0)).toBeUndefined();
  });
});

describe('XNNGraph reader arguments', () => {
  it.each([
    ['a number', 12],
    ['an ArrayBuffer', new ArrayBuffer(8)],
    ['a Uint16Array', new Uint16Array(8)],
  ])('refuses %s', (_, value) => {
    expectArgumentError(() => reader().read(value as never), 'ERR_INVALID_ARG_TYPE');
    const addon = tryLoadAddon() as unknown as { readXnnGraph(bytes: unknown): unknown };
    expectArgumentError(() => addon.readXnnGraph(value), 'ERR_INVALID_ARG_TYPE');
  });

  it('reads an empty or detached buffer as malformed', () => {
    expect(reader().read(new Uint8Array(0))).toMatch(/identifier/);
    const buffer = new ArrayBuffer(64);
    const bytes = new Uint8Array(buffer);
    structuredClone(buffer, { transfer: [buffer] });
    expect(reader().read(bytes)).toMatch(/identifier/);
  });
});

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Sets the vtable size of the table at `at`. */
function setVtableSize(bytes: Uint8Array, at: number, size: number): void {
  const vtable = at - view(bytes).getInt32(at, true);
  view(bytes).setUint16(vtable, size, true);
}

/** The position of field `slot` of the table at `at` (which must have it). */
function fieldAt(bytes: Uint8Array, at: number, slot: number): number {
  const vtable = at - view(bytes).getInt32(at, true);
  return at + view(bytes).getUint16(vtable + 4 + 2 * slot, true);
}
