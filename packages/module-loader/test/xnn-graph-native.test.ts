// The addon's XNNGraph reader against the JavaScript one on mutated delegate payloads:
// both refuse a payload, or both read it with the same columns, the same constant keys
// (or the same refusal of a key) and the same constant bytes. MEMLAYER_XNN_GRAPH_CASES
// sets how many cases run (default 30 000; e.g. 1000000 for a long run).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadXnnGraphReader, type XnnGraphReader } from '@memlayer/mmap-native';
import { afterAll, expect, test } from 'vitest';
import { MappedRanges } from '../src/pte/mapped-bytes.js';
import { PteFile } from '../src/pte/pte-file.js';
import {
  XNN_DATATYPE_FP32,
  XNN_INVALID_VALUE_ID,
  XNODE_UNION_TYPE,
} from '../src/pte/write/xnn-graph-description.js';
import { encodeXnnPayload } from '../src/pte/write/xnn-payload.js';
import { readXnnGraph, readXnnGraphWith, type XnnGraph } from '../src/pte/xnn-graph.js';
import { makeLayers, random, writeMlp } from './pte-fixtures.js';
import { quantizedGraph } from './xnn-graph-seeds.js';

const CASES = Number(process.env['MEMLAYER_XNN_GRAPH_CASES'] ?? 30_000);

class Refused extends Error {}
const malformed = (what: string): never => {
  throw new Refused(what);
};

/** Linux x64 CI builds the addon: its absence there is a failure, not a skip. */
function nativeReader(): XnnGraphReader {
  const reader = loadXnnGraphReader();
  if (reader === null) throw new Error('the addon has no XNNGraph reader: build it first');
  return reader;
}

const dir = mkdtempSync(join(tmpdir(), 'xnn-graph-native-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The delegate payloads of a program the exporter wrote. */
function payloadsOf(path: string): Uint8Array[] {
  const file = new PteFile(path, new MappedRanges(path, 'a .pte program'));
  const payloads: Uint8Array[] = [];
  for (const name of file.methodNames()) {
    for (const delegate of file.method(name)?.delegates ?? [])
      payloads.push(delegate.payload.slice());
  }
  return payloads;
}

/** A graph the exporter's MLPs lack: ids that are not indices, 1x1 and add nodes, keys beyond ASCII. */
function unusualPayload(): Uint8Array {
  const id = (index: number) => 1000 + 7 * (5 - index);
  const value = (index: number, more: object = {}) => ({
    datatype: XNN_DATATYPE_FP32,
    dims: [1, 2 + index],
    idOut: id(index),
    ...more,
  });
  return encodeXnnPayload({
    values: [
      value(0, { externalId: 0, flags: 1 }),
      value(1, { constantBufferIdx: 1 }),
      value(2),
      value(3),
      value(4, { constantBufferIdx: 2 }),
      value(5, { externalId: 1, flags: 2, dims: [] }),
    ],
    nodes: [
      {
        kind: 'fullyConnected',
        input1: id(0),
        filter: id(1),
        bias: XNN_INVALID_VALUE_ID,
        output: id(2),
      },
      { kind: 'node1x1', type: XNODE_UNION_TYPE.gelu, input: id(2), output: id(3), flags: 4 },
      { kind: 'node1x1', type: XNODE_UNION_TYPE.add, input: id(3), output: id(4) },
      {
        kind: 'node1x1',
        type: XNODE_UNION_TYPE.softmax,
        input: id(3),
        output: id(5),
        outputMinMax: { min: -1.5, max: 2 },
      },
    ],
    numExterns: 2,
    inputIds: [id(0)],
    outputIds: [id(5)],
    constantData: [
      { offset: 0, size: 0, namedKey: '' },
      { offset: 0xffff_ffff_ffff_ffffn, size: 8, namedKey: 'poids-é→λ' },
      { offset: 16, size: 4 },
    ],
    constantBytes: new Uint8Array(32),
  });
}

type Outcome<T> = { value: T } | { refused: true };

function outcome<T>(read: () => T): Outcome<T> {
  try {
    return { value: read() };
  } catch (error) {
    if (error instanceof Refused) return { refused: true };
    throw error;
  }
}

/** Everything a caller can ask a graph for, as plain values. */
function snapshot(graph: XnnGraph) {
  const keys: Outcome<string | null>[] = [];
  const bytes: Outcome<[number, number]>[] = [];
  for (let i = 0; i < graph.constantCount; i++) {
    keys.push(outcome(() => graph.constantKey(i)));
    bytes.push(
      outcome(() => {
        const b = graph.constantBytes(i);
        return [b.byteOffset, b.byteLength] as [number, number];
      }),
    );
  }
  keys.push(outcome(() => graph.constantKey(graph.constantCount)));
  return {
    nodeCount: graph.nodeCount,
    valueCount: graph.valueCount,
    constantCount: graph.constantCount,
    columns: Object.fromEntries(
      (
        [
          'nodeType',
          'nodeInput',
          'nodeFilter',
          'nodeBias',
          'nodeOutput',
          'nodeFlags',
          'outputMin',
          'outputMax',
          'datatype',
          'quantized',
          'constantIndex',
          'externalId',
          'valueFlags',
          'dimStart',
          'dims',
        ] as const
      ).map((name) => [name, `${graph[name].constructor.name} ${Array.from(graph[name]).join()}`]),
    ),
    inputIds: graph.inputIds,
    outputIds: graph.outputIds,
    keys,
    bytes,
  };
}

function compare(payload: Uint8Array, reader: XnnGraphReader): 'read' | 'refused' {
  const js = outcome(() => snapshot(readXnnGraphWith(payload, malformed, null)));
  const native = outcome(() => snapshot(readXnnGraphWith(payload, malformed, reader)));
  if (JSON.stringify(js) !== JSON.stringify(native)) expect(native).toEqual(js);
  return 'refused' in js ? 'refused' : 'read';
}

const INTERESTING = [0, 1, 2, 3, 4, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffc, 0x10000];

/** A copy of `seed` with a few bytes flipped, a u32 overwritten or its end cut off. */
function mutate(seed: Uint8Array, next: () => number): Uint8Array {
  const bytes = seed.slice();
  const view = new DataView(bytes.buffer);
  // Most mutations land in the flatbuffer (after the 32-byte XH00 header, read by shared code).
  const from = next() < 0.9 ? Math.min(32, bytes.length) : 0;
  const at = (size: number) => from + Math.floor(next() * (bytes.length - from - size + 1));
  const mutation = next();
  if (mutation < 0.05) return bytes.subarray(0, Math.floor(next() * bytes.length));
  if (mutation < 0.45) {
    const flips = 1 + Math.floor(next() * 3);
    for (let f = 0; f < flips; f++) {
      const i = at(1);
      bytes[i] = (bytes[i] as number) ^ (1 << Math.floor(next() * 8));
    }
  } else if (mutation < 0.6) {
    bytes[at(1)] = Math.floor(next() * 4);
  } else {
    const i = next() < 0.7 ? at(4) & ~3 : at(4);
    const pick = Math.floor(next() * (INTERESTING.length + 2));
    const value =
      pick < INTERESTING.length
        ? (INTERESTING[pick] as number)
        : pick === INTERESTING.length
          ? view.getUint32(i, true) + Math.floor(next() * 64) - 32
          : Math.floor(next() * bytes.length);
    view.setUint32(i, value >>> 0, true);
  }
  return bytes;
}

test('readXnnGraph uses the addon here', () => {
  const [payload] = payloadsOf(writeMlp(dir, 'uses', makeLayers([3, 2])).pte);
  const graph = readXnnGraph(payload as Uint8Array, malformed);
  expect(graph.nodeInput.buffer).toBe(graph.dims.buffer);
});

test('both read quantized values and values sharing dims, and refuse too many shared dims', () => {
  const reader = nativeReader();
  expect(compare(quantizedGraph(), reader)).toBe('read');
  const graph = readXnnGraphWith(quantizedGraph(3), malformed, reader);
  expect(Array.from(graph.quantized)).toEqual([0, 1, 1, 0, 0, 0]);
  expect(graph.dims.length).toBe(3006);
  expect(compare(quantizedGraph(3), reader)).toBe('read');
  // 40 values x 1000 dims from a buffer of ~5 KB.
  for (const native of [null, reader]) {
    expect(() => readXnnGraphWith(quantizedGraph(40), malformed, native)).toThrow(
      /40006 dims in all/,
    );
  }
});

test(`${CASES} mutated payloads: the addon and JavaScript agree`, () => {
  const reader = nativeReader();
  const seeds = [
    ...payloadsOf(writeMlp(dir, 'ptd', makeLayers([3, 4, 2])).pte),
    ...payloadsOf(
      writeMlp(dir, 'offset', makeLayers([3, 2], 5, 'clamp'), { constants: 'offset', tail: 42 })
        .pte,
    ),
    unusualPayload(),
    quantizedGraph(),
    quantizedGraph(2),
  ];
  const outcomes = { read: 0, refused: 0 };
  for (const seed of seeds) expect(compare(seed, reader)).toBe('read');
  const next = random(0x2545f491);
  for (let i = 0; i < CASES; i++) {
    outcomes[compare(mutate(seeds[i % seeds.length] as Uint8Array, next), reader)]++;
  }
  expect(outcomes.read + outcomes.refused).toBe(CASES);
  if (CASES >= 10_000) {
    expect(outcomes.read).toBeGreaterThan(CASES / 20);
    expect(outcomes.refused).toBeGreaterThan(CASES / 20);
  }
  console.log(`xnn-graph differential: ${JSON.stringify(outcomes)}`);
}, 1_800_000);
