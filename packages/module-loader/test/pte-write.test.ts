import { describe, expect, test } from 'vitest';
import { ModuleLoaderError } from '../src/index.js';
import { FlatTable } from './flatbuffer-table.js';
import { xnnGraphOf } from './pte-files.js';
import {
  encodePtd,
  encodePte,
  encodeXnnPayload,
  type PteDescription,
  SCALAR_TYPE_FLOAT,
  XNN_DATATYPE_FP32,
  XNN_INVALID_VALUE_ID,
  XNN_NAMED_CONSTANT_OFFSET,
  XNODE_UNION_TYPE,
  type XnnGraphDescription,
} from './pte-writer.js';

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  Buffer.from(bytes.subarray(start, end)).toString('latin1');
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** x[1,4] → FC(w[3,4], b[3]) fused ReLU → y[1,3] → softmax → z[1,3]. */
function smallGraph(): XnnGraphDescription {
  return {
    values: [
      { datatype: XNN_DATATYPE_FP32, dims: [1, 4], externalId: 0, flags: 1, idOut: 0 },
      { datatype: XNN_DATATYPE_FP32, dims: [3, 4], constantBufferIdx: 1, idOut: 1 },
      { datatype: XNN_DATATYPE_FP32, dims: [3], constantBufferIdx: 2, idOut: 2 },
      { datatype: XNN_DATATYPE_FP32, dims: [1, 3], idOut: 3 },
      { datatype: XNN_DATATYPE_FP32, dims: [1, 3], externalId: 1, flags: 2, idOut: 4 },
    ],
    nodes: [
      {
        kind: 'fullyConnected',
        input1: 0,
        filter: 1,
        bias: 2,
        output: 3,
        outputMinMax: { min: 0, max: Number.POSITIVE_INFINITY },
      },
      { kind: 'node1x1', type: XNODE_UNION_TYPE.softmax, input: 3, output: 4 },
    ],
    numExterns: 2,
    inputIds: [0],
    outputIds: [4],
    constantData: [
      { offset: 0, size: 0, namedKey: '' },
      { offset: XNN_NAMED_CONSTANT_OFFSET, size: 48, namedKey: 'w' },
      { offset: 16, size: 12 },
    ],
    constantBytes: new Uint8Array(28).fill(7),
  };
}

describe('encodeXnnPayload', () => {
  test('writes the XH00 header, the XN01 flatbuffer at 32 and the constants after it', () => {
    const payload = encodeXnnPayload(smallGraph());
    const header = view(payload);
    expect([...payload.subarray(0, 4)]).toEqual([0, 0, 0, 0]);
    expect(ascii(payload, 4, 8)).toBe('XH00');
    expect(header.getUint16(8, true)).toBe(30);
    expect(header.getUint32(10, true)).toBe(32);
    const flatbufferSize = header.getUint32(14, true);
    const constantOffset = header.getUint32(18, true);
    expect(constantOffset).toBe(32 + Math.ceil(flatbufferSize / 16) * 16);
    expect(header.getBigUint64(22, true)).toBe(28n);
    expect([...payload.subarray(30, 32)]).toEqual([0, 0]);
    expect(ascii(payload, 36, 40)).toBe('XN01');
    expect(payload.length).toBe(constantOffset + 28);
    expect([...payload.subarray(constantOffset)]).toEqual(new Array(28).fill(7));
  });

  test('writes each XNNGraph field in its schema slot', () => {
    const graph = xnnGraphOf(encodeXnnPayload(smallGraph()));
    expect(graph.str(0)).toBe('0');
    expect(graph.u32(3)).toBe(2);
    expect(graph.u32s(4)).toEqual([0]);
    expect(graph.u32s(5)).toEqual([4]);
    // slots 6 and 7 are the deprecated constant_buffer and mem_buffer_sizes
    expect(graph.has(6) || graph.has(7)).toBe(false);
    const values = graph.tables(2).map((value) => {
      expect(value.u8(0)).toBe(1); // XValueUnion XNNTensorValue
      const t = value.table(1) as FlatTable;
      return [t.u16(0), t.u32(1), t.u32s(2), t.u32(3), t.u32(4), t.u32(5), t.u32(6)];
    });
    expect(values).toEqual([
      [1, 2, [1, 4], 0, 0, 1, 0],
      [1, 2, [3, 4], 1, XNN_INVALID_VALUE_ID, 0, 1],
      [1, 1, [3], 2, XNN_INVALID_VALUE_ID, 0, 2],
      [1, 2, [1, 3], 0, XNN_INVALID_VALUE_ID, 0, 3],
      [1, 2, [1, 3], 0, 1, 2, 4],
    ]);
    const [fc, softmax] = graph.tables(1) as [FlatTable, FlatTable];
    expect(fc.u8(0)).toBe(2);
    const fcBody = fc.table(1) as FlatTable;
    expect([0, 1, 2, 3, 4].map((slot) => fcBody.u32(slot))).toEqual([0, 1, 2, 3, 0]);
    const minMax = fc.table(3) as FlatTable;
    expect([minMax.f32(0), minMax.f32(1)]).toEqual([0, Number.POSITIVE_INFINITY]);
    expect(softmax.u8(0)).toBe(3);
    expect(softmax.has(3)).toBe(false);
    const softmaxBody = softmax.table(1) as FlatTable;
    expect([softmaxBody.u32(0), softmaxBody.u32(1)]).toEqual([3, 4]);
    const constants = graph.tables(8);
    expect(constants.map((c) => [c.u64(0), c.u64(1), c.str(2)])).toEqual([
      [0n, 0n, ''],
      [XNN_NAMED_CONSTANT_OFFSET, 48n, 'w'],
      [16n, 12n, null],
    ]);
  });

  test('a fully-connected layer without bias names XNN_INVALID_VALUE_ID', () => {
    const description = smallGraph();
    const graph = xnnGraphOf(
      encodeXnnPayload({
        ...description,
        nodes: [
          { kind: 'fullyConnected', input1: 0, filter: 1, bias: XNN_INVALID_VALUE_ID, output: 4 },
        ],
      }),
    );
    const fc = (graph.tables(1)[0] as FlatTable).table(1) as FlatTable;
    expect(fc.u32(2)).toBe(0xffff_ffff);
  });

  test('refuses numbers that do not fit their field', () => {
    const description = smallGraph();
    const bad = { ...description, numExterns: -1 };
    expect(() => encodeXnnPayload(bad)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    const badType = {
      ...description,
      nodes: [{ kind: 'node1x1' as const, type: 0, input: 0, output: 4 }],
    };
    expect(() => encodeXnnPayload(badType)).toThrow(ModuleLoaderError);
  });
});

function smallProgram(overrides: Partial<PteDescription> = {}): PteDescription {
  const payload = encodeXnnPayload(smallGraph());
  return {
    plans: [
      {
        name: 'forward',
        values: [
          {
            kind: 'tensor',
            scalarType: SCALAR_TYPE_FLOAT,
            sizes: [1, 4],
            dimOrder: [0, 1],
            allocation: { memoryId: 1, offset: 0 },
          },
          {
            kind: 'tensor',
            scalarType: SCALAR_TYPE_FLOAT,
            sizes: [1, 3],
            dimOrder: [0, 1],
            allocation: { memoryId: 1, offset: 16 },
          },
        ],
        inputs: [0],
        outputs: [1],
        instructions: [{ kind: 'delegateCall', delegateIndex: 0, args: [0, 1] }],
        delegates: [{ id: 'XnnpackBackend', payload }],
        nonConstBufferSizes: [0, 32],
      },
    ],
    namedData: [
      { key: 'w', bytes: new Uint8Array(48).fill(1) },
      { key: 'b', bytes: new Uint8Array(12).fill(2) },
      { key: 'w-again', bytes: new Uint8Array(48).fill(1) },
    ],
    ...overrides,
  };
}

describe('encodePte', () => {
  test('inserts the eh00 header at 8 and places segments from align_up(program_size, 128)', () => {
    const file = encodePte(smallProgram());
    const header = view(file);
    expect(ascii(file, 4, 8)).toBe('ET12');
    expect(ascii(file, 8, 12)).toBe('eh00');
    expect(header.getUint32(12, true)).toBe(32);
    const programSize = Number(header.getBigUint64(16, true));
    const base = Number(header.getBigUint64(24, true));
    const dataSize = Number(header.getBigUint64(32, true));
    expect(base).toBe(Math.ceil(programSize / 128) * 128);
    expect(file.length).toBe(base + dataSize);
    // 32 header bytes: nothing pads them; the flatbuffer's vtables and tables follow
    expect([...file.subarray(programSize, base)].every((b) => b === 0)).toBe(true);

    const program = FlatTable.root(file.subarray(0, programSize));
    const segments = program
      .tables(4)
      .map((s): [number, number] => [Number(s.u64(0)), Number(s.u64(1))]);
    // segment 0: the empty constant segment; 1: the delegate; 2, 3: named data (w stored once)
    expect(segments.length).toBe(4);
    expect(segments[0]).toEqual([0, 0]);
    for (const [offset] of segments) expect(offset % 128).toBe(0);
    const payload = smallProgram().plans[0]?.delegates?.[0]?.payload as Uint8Array;
    const [delegateOffset, delegateSize] = segments[1] as [number, number];
    expect(delegateSize).toBe(payload.length);
    expect(file.subarray(base + delegateOffset, base + delegateOffset + delegateSize)).toEqual(
      payload,
    );
    const constantSegment = program.table(5) as FlatTable;
    expect([constantSegment.u32(0), constantSegment.u64s(1)]).toEqual([0, [0n]]);
    const named = program.tables(7).map((n) => [n.str(0), n.u32(1)]);
    expect(named).toEqual([
      ['w', 2],
      ['b', 3],
      ['w-again', 2],
    ]);
    const [wOffset, wSize] = segments[2] as [number, number];
    expect([...file.subarray(base + wOffset, base + wOffset + wSize)]).toEqual(
      new Array(48).fill(1),
    );
    expect(segments[3]?.[0]).toBe(Math.ceil((wOffset + wSize) / 128) * 128);
  });

  test('writes the execution plan: values, chain, delegate reference, buffer sizes', () => {
    const file = encodePte(smallProgram());
    const programSize = Number(view(file).getBigUint64(16, true));
    const program = FlatTable.root(file.subarray(0, programSize));
    expect(program.u32(0)).toBe(0);
    const [plan] = program.tables(1) as [FlatTable];
    expect(plan.str(0)).toBe('forward');
    const [input, output] = plan.tables(2) as [FlatTable, FlatTable];
    expect(input.u8(0)).toBe(5); // KernelTypes Tensor
    const tensor = output.table(1) as FlatTable;
    expect(tensor.u8(0)).toBe(6);
    expect(tensor.i32s(2)).toEqual([1, 3]);
    expect([...tensor.bytes(3)]).toEqual([0, 1]);
    const allocation = tensor.table(6) as FlatTable;
    expect([allocation.u32(0), allocation.u32(1), allocation.u32(2)]).toEqual([1, 16, 0]);
    expect([plan.i32s(3), plan.i32s(4)]).toEqual([[0], [1]]);
    const [chain] = plan.tables(5) as [FlatTable];
    const [instruction] = chain.tables(2) as [FlatTable];
    expect(instruction.u8(0)).toBe(2); // InstructionArguments DelegateCall
    const call = instruction.table(1) as FlatTable;
    expect([call.i32(0), call.i32s(1)]).toEqual([0, [0, 1]]);
    expect(plan.tables(6)).toEqual([]);
    expect(plan.has(6)).toBe(true); // operators: present, empty
    const [delegate] = plan.tables(7) as [FlatTable];
    expect(delegate.str(0)).toBe('XnnpackBackend');
    const processed = delegate.table(1) as FlatTable;
    expect([processed.u8(0), processed.u32(1)]).toEqual([1, 1]); // SEGMENT, segments[1]
    expect(plan.u64s(8)).toEqual([0n, 32n]);
  });

  test('an inline delegate with no named data is one flatbuffer without a header', () => {
    const description = smallProgram({ namedData: [] });
    const plan = description.plans[0] as PteDescription['plans'][number];
    const payload = plan.delegates?.[0]?.payload as Uint8Array;
    const file = encodePte({
      plans: [{ ...plan, delegates: [{ id: 'XnnpackBackend', payload, location: 'inline' }] }],
    });
    expect(ascii(file, 4, 8)).toBe('ET12');
    expect(ascii(file, 8, 12)).not.toBe('eh00');
    const program = FlatTable.root(file);
    const processed = ((program.tables(1)[0] as FlatTable).tables(7)[0] as FlatTable).table(
      1,
    ) as FlatTable;
    expect([processed.u8(0), processed.u32(1)]).toEqual([0, 0]);
    const data = (program.tables(3)[0] as FlatTable).vector(0);
    expect((data?.start as number) % 16).toBe(0);
    expect(file.subarray(data?.start, (data?.start as number) + payload.length)).toEqual(payload);
    expect(program.has(7)).toBe(false);
    expect(program.tables(4).map((s) => [s.u64(0), s.u64(1)])).toEqual([[0n, 0n]]);
  });

  test('refuses extendedHeader: false when segments hold bytes, and conflicting keys', () => {
    expect(() => encodePte(smallProgram({ extendedHeader: false }))).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    const conflicting = smallProgram({
      namedData: [
        { key: 'w', bytes: new Uint8Array([1]) },
        { key: 'w', bytes: new Uint8Array([2]) },
      ],
    });
    expect(() => encodePte(conflicting)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', field: 'namedData[1].key' }),
    );
  });
});

describe('encodePtd', () => {
  test('writes FT01, the FH01 header at 8 and 128-aligned segments, equal bytes once', () => {
    const a = new Uint8Array(100).fill(3);
    const b = new Uint8Array(20).fill(4);
    const file = encodePtd([
      { key: 'a', bytes: a },
      { key: 'b', bytes: b },
      { key: 'a2', bytes: a.slice() },
    ]);
    const header = view(file);
    expect(ascii(file, 4, 8)).toBe('FT01');
    expect(ascii(file, 8, 12)).toBe('FH01');
    expect(header.getUint32(12, true)).toBe(40);
    expect(header.getBigUint64(16, true)).toBe(48n);
    const flatbufferSize = Number(header.getBigUint64(24, true));
    const base = Number(header.getBigUint64(32, true));
    const dataSize = Number(header.getBigUint64(40, true));
    expect(base).toBe(Math.ceil((48 + flatbufferSize) / 128) * 128);
    expect(dataSize).toBe(128 + 20);
    expect(file.length).toBe(base + dataSize);
    const root = FlatTable.root(file.subarray(0, 48 + flatbufferSize));
    expect(root.u32(0)).toBe(0);
    expect(root.tables(1).map((s) => [s.u64(0), s.u64(1)])).toEqual([
      [0n, 100n],
      [128n, 20n],
    ]);
    const named = root.tables(2);
    expect(named.map((n) => [n.str(0), n.u32(1), n.has(2)])).toEqual([
      ['a', 0, false],
      ['b', 1, false],
      ['a2', 0, false],
    ]);
    expect(file.subarray(base, base + 100)).toEqual(a);
    expect(file.subarray(base + 128, base + 148)).toEqual(b);
  });

  test('with no entries it is the header and flatbuffer padded to the segment base', () => {
    const file = encodePtd([]);
    const header = view(file);
    expect(header.getBigUint64(40, true)).toBe(0n);
    expect(file.length).toBe(Number(header.getBigUint64(32, true)));
    expect(file.length % 128).toBe(0);
  });
});
