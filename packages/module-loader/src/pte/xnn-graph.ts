// The XNNPACK delegate's payload: an XH00 header, then the XNNGraph flatbuffer (identifier
// XN01) and constant data. Read into a few typed columns (one pass, no object per node or
// value), by @memlayer/mmap-native's addon when it loads (xnn-graph-native.ts) and here
// otherwise; the two accept the same graphs with the same columns. A constant's key and
// bytes are read from the flatbuffer when asked for.
import type { XnnGraphColumns, XnnGraphReader } from '@memlayer/mmap-native';
import { mmapNative } from '#deferred/mmap-native';
import { FlatBuffer, type Malformed, type Vector } from './flatbuffer.js';
import { constantEntries } from './xnn-constants.js';
import { readXnnGraphNatively } from './xnn-graph-native.js';

/** backends/xnnpack/serialization/schema.fbs XNodeUnion, 1-based in declaration order. */
export const XNODE_NAMES = [
  'NONE',
  'XNNAdd',
  'XNNFullyConnected',
  'XNNSoftmax',
  'XNNSigmoid',
  'XNNStaticTranspose',
  'XNNClamp',
  'XNNConv2d',
  'XNNDiv',
  'XNNStaticResizeBilinear2D',
  'XNNStaticConstantPad',
  'XNNAvgPooling2d',
  'XNNMinimum',
  'XNNDepthwiseConv2d',
  'XNNMaxPooling2d',
  'XNNMultiply',
  'XNNSubtract',
  'XNNFloor',
  'XNNConvert',
  'XNNGlobalAvgPooling2d',
  'XNNStaticReshape',
  'XNNArgMaxPooling2d',
  'XNNSquareRoot',
  'XNNCeiling',
  'XNNHardswish',
  'XNNLeakyReLU',
  'XNNMaximum',
  'XNNNegate',
  'XNNSquare',
  'XNNELU',
  'XNNAbs',
  'XNNPReLU',
  'XNNConcatenate2',
  'XNNConcatenate3',
  'XNNConcatenate4',
  'XNNStaticSlice',
  'XNNScaledDotProductAttention',
  'XNNBatchMatrixMultiply',
  'XNNConcatenate5',
  'XNNConvTranspose2d',
  'XNNReciprocalSquareRoot',
  'XNNLog',
  'XNNGelu',
  'XNNTanh',
  'XNNExp',
  'XNNSin',
  'XNNCopy',
  'XNNCos',
] as const;
export const XNODE_FULLY_CONNECTED = 2;
export const XNODE_CLAMP = 6;
export const XNODE_GELU = 42;
/** Nodes whose table is _XNNNode1x1 {input_id, output_id, flags}. */
const NODE_1X1 = new Set([
  3, 4, 6, 17, 18, 19, 22, 23, 24, 27, 28, 30, 40, 41, 42, 43, 44, 45, 46, 47,
]);
/** XNNDatatype: xnn_datatype_fp32. */
export const XNN_DATATYPE_FP32 = 1;
/** XValueUnion: XNNTensorValue = 1, XNNQuantizedTensorValue = 2. */
const XVALUE_TENSOR = 1;
const XVALUE_QUANTIZED = 2;
/** XNNTensorValue.flags (runtime/XNNExecutor.cpp): external input and output. */
export const XNN_VALUE_FLAG_EXTERNAL_INPUT = 1;
export const XNN_VALUE_FLAG_EXTERNAL_OUTPUT = 2;
/** An id that names no value (XNN_INVALID_VALUE_ID), e.g. a fully-connected node's absent bias. */
export const XNN_INVALID_ID = 0xffffffff;

/** backends/xnnpack/runtime/XNNHeader.h: magic at [4, 8), then the section offsets. */
const HEADER_MAGIC = 'XH00';
const HEADER_MIN_LENGTH = 30;
/** XNNGraph identifiers the runtime accepts (runtime/XNNCompiler.cpp). */
const GRAPH_IDENTIFIERS = new Set(['XN01', 'XN00']);

/** XNNGraph field slots (constant_data's is in xnn-constants.ts). */
const GRAPH = { xnodes: 1, xvalues: 2, inputIds: 4, outputIds: 5 };
const TENSOR_VALUE = {
  datatype: 0,
  dims: 2,
  constantBufferIdx: 3,
  externalId: 4,
  flags: 5,
  idOut: 6,
};

/**
 * A delegate's graph as the addon's reader gives it (mmap-native's XnnGraphColumns: values
 * named by their index in xvalues, node fields and input/output ids translated to these
 * indices), read the same way by the JavaScript reader.
 */
export interface XnnGraph extends Omit<XnnGraphColumns, 'inputIds' | 'outputIds' | 'namedKey'> {
  readonly nodeCount: number;
  readonly valueCount: number;
  readonly inputIds: readonly number[];
  readonly outputIds: readonly number[];
  /** constant_data[i].named_key, or null when the constant is stored by offset. */
  constantKey(index: number): string | null;
  /** The bytes of constant_data[i] stored by offset in the payload's constant data. */
  constantBytes(index: number): Uint8Array;
}

/** Reads a delegate payload; `malformed` throws the caller's error for a malformed one. */
export function readXnnGraph(payload: Uint8Array, malformed: Malformed): XnnGraph {
  return readXnnGraphWith(payload, malformed, mmapNative().loadXnnGraphReader());
}

/** readXnnGraph with the addon's `reader`, or in JavaScript when it is null. */
export function readXnnGraphWith(
  payload: Uint8Array,
  malformed: Malformed,
  reader: XnnGraphReader | null,
): XnnGraph {
  const { graphBytes, constants } = splitPayload(payload, malformed);
  return reader === null
    ? readGraph(graphBytes, constants, malformed)
    : readXnnGraphNatively(reader, graphBytes, constants, malformed);
}

function readGraph(graphBytes: Uint8Array, constants: Uint8Array, malformed: Malformed): XnnGraph {
  const fb = new FlatBuffer(graphBytes, malformed);
  if (!GRAPH_IDENTIFIERS.has(fb.identifier())) {
    malformed(`expected the XNNGraph identifier XN01 but found "${fb.identifier()}"`);
  }
  const graph = fb.root('XNNGraph');
  const values = readValues(
    fb,
    fb.fieldVector(graph, GRAPH.xvalues, 4, 'XNNGraph.xvalues'),
    malformed,
  );
  const nodes = readNodes(
    fb,
    fb.fieldVector(graph, GRAPH.xnodes, 4, 'XNNGraph.xnodes'),
    values.indexOf,
    malformed,
  );
  const entries = constantEntries(fb, graph, constants, malformed);
  for (let v = 0; v < values.count; v++) {
    if (
      (values.columns.constantIndex[v] as number) >= entries.count &&
      values.columns.constantIndex[v] !== 0
    ) {
      malformed(`value ${v}: constant ${values.columns.constantIndex[v]} of ${entries.count}`);
    }
  }
  const externals = (slot: number, name: string) =>
    fb.numbers(fb.fieldVector(graph, slot, 4, name)).map((id) => {
      const index = values.indexOf(id);
      return index >= 0 ? index : malformed(`${name}: no value has id ${id}`);
    });
  const inputIds = externals(GRAPH.inputIds, 'XNNGraph.input_ids');
  const outputIds = externals(GRAPH.outputIds, 'XNNGraph.output_ids');
  return {
    ...nodes,
    ...values.columns,
    valueCount: values.count,
    inputIds,
    outputIds,
    constantCount: entries.count,
    constantKey: entries.key,
    constantBytes: entries.bytes,
  };
}

/** The XNNGraph flatbuffer and the constant data of a payload, with or without XH00. */
function splitPayload(
  payload: Uint8Array,
  malformed: Malformed,
): { graphBytes: Uint8Array; constants: Uint8Array } {
  if (payload.byteLength < 8) malformed(`a delegate payload of ${payload.byteLength} bytes`);
  const magic = String.fromCharCode(...payload.subarray(4, 8));
  if (magic !== HEADER_MAGIC) return { graphBytes: payload, constants: payload.subarray(0, 0) };
  const header = new FlatBuffer(payload, malformed);
  const length = header.u16(8);
  if (length < HEADER_MIN_LENGTH) malformed(`XH00 header length ${length}`);
  const graphOffset = header.u32(10);
  const graphSize = header.u32(14);
  const constantOffset = header.u32(18);
  const constantSize = header.u64(22, 'XH00 constant_data_size');
  if (!(graphOffset >= length && graphOffset + graphSize <= payload.byteLength)) {
    malformed(
      `XH00 flatbuffer (bytes ${graphOffset}..${graphOffset + graphSize}) lies outside the ${payload.byteLength}-byte payload`,
    );
  }
  if (!(constantOffset + constantSize <= payload.byteLength)) {
    malformed(
      `XH00 constant data (bytes ${constantOffset}..${constantOffset + constantSize}) lies outside the ${payload.byteLength}-byte payload`,
    );
  }
  return {
    graphBytes: payload.subarray(graphOffset, graphOffset + graphSize),
    constants: payload.subarray(constantOffset, constantOffset + constantSize),
  };
}

function readValues(fb: FlatBuffer, list: Vector, malformed: Malformed) {
  const count = list.length;
  const { u8, u16, u32 } = fb.words;
  const { table, field, target } = fb.tableReader();
  const datatype = new Uint16Array(count);
  const quantized = new Uint8Array(count);
  const constantIndex = new Uint32Array(count);
  const externalId = new Uint32Array(count);
  const valueFlags = new Uint32Array(count);
  const dimStart = new Uint32Array(count + 1);
  const ids = new Uint32Array(count);
  // Each value's dims vector (position of its first element) and length, by id.
  const dimsAt = new Uint32Array(count);
  const dimsLength = new Uint32Array(count);
  let totalDims = 0;
  // One numeric pass per value: an object per table would cost more than its reads.
  for (let i = 0; i < count; i++) {
    const value = table(list.start + 4 * i + (u32[(list.start >> 2) + i] as number), 'XValue');
    const typeAt = field(value, 0, 1, 'XValue');
    const type = typeAt === 0 ? 0 : (u8[typeAt] as number);
    if (type !== XVALUE_TENSOR && type !== XVALUE_QUANTIZED)
      malformed(`xvalues[${i}]: value type ${type}`);
    const unionAt = target(field(value, 1, 4, 'XValue'));
    if (unionAt === 0) malformed(`xvalues[${i}]: no value`);
    let tensor = table(unionAt, 'XValue.xvalue_union');
    if (type === XVALUE_QUANTIZED) {
      const inner = target(field(tensor, 0, 4, 'XNNQuantizedTensorValue'));
      if (inner === 0) malformed(`xvalues[${i}]: a quantized value without its tensor`);
      tensor = table(inner, 'XNNQuantizedTensorValue.tensor_value');
    }
    const idAt = field(tensor, TENSOR_VALUE.idOut, 4, 'XNNTensorValue');
    ids[i] = idAt === 0 ? 0 : (u32[idAt >> 2] as number);
    const id = i;
    quantized[id] = type === XVALUE_QUANTIZED ? 1 : 0;
    const datatypeAt = field(tensor, TENSOR_VALUE.datatype, 2, 'XNNTensorValue');
    datatype[id] = datatypeAt === 0 ? 0 : (u16[datatypeAt >> 1] as number);
    const constantAt = field(tensor, TENSOR_VALUE.constantBufferIdx, 4, 'XNNTensorValue');
    constantIndex[id] = constantAt === 0 ? 0 : (u32[constantAt >> 2] as number);
    const externalAt = field(tensor, TENSOR_VALUE.externalId, 4, 'XNNTensorValue');
    externalId[id] = externalAt === 0 ? 0 : (u32[externalAt >> 2] as number);
    const flagsAt = field(tensor, TENSOR_VALUE.flags, 4, 'XNNTensorValue');
    valueFlags[id] = flagsAt === 0 ? 0 : (u32[flagsAt >> 2] as number);
    const dims = fb.vectorAt(
      target(field(tensor, TENSOR_VALUE.dims, 4, 'XNNTensorValue')),
      4,
      'XNNTensorValue.dims',
    );
    dimsAt[id] = dims.start;
    dimsLength[id] = dims.length;
    totalDims += dims.length;
  }
  // Values may share a dims vector: unbounded, a small buffer could ask for memory
  // quadratic in its length.
  if (totalDims > fb.length) {
    malformed(
      `XNNTensorValue.dims: ${totalDims} dims in all, more than the ${fb.length} bytes read`,
    );
  }
  const dims = new Uint32Array(totalDims);
  let at = 0;
  for (let id = 0; id < count; id++) {
    dimStart[id] = at;
    const start = dimsAt[id] as number;
    const length = dimsLength[id] as number;
    for (let d = 0; d < length; d++) dims[at++] = u32[(start >> 2) + d] as number;
  }
  dimStart[count] = at;
  return {
    count,
    indexOf: valueIndex(ids, malformed),
    columns: { datatype, quantized, constantIndex, externalId, valueFlags, dimStart, dims },
  };
}

/**
 * Nodes name values by id_out. The serializer numbers them in order (operators/
 * node_visitor.py: id_out = len(xvalues)), so a value's id is usually its index; the
 * runtime maps any unique ids (XNNCompiler.cpp remapped_ids), and so does this.
 * Returns a value's index, or -1 for an id no value has.
 */
function valueIndex(ids: Uint32Array, malformed: Malformed): (id: number) => number {
  const count = ids.length;
  if (ids.every((id, index) => id === index)) return (id) => (id < count ? id : -1);
  const index = new Map<number, number>();
  ids.forEach((id, at) => {
    if (index.has(id)) malformed(`xvalues[${at}]: id_out ${id} is taken`);
    index.set(id, at);
  });
  return (id) => index.get(id) ?? -1;
}

function readNodes(
  fb: FlatBuffer,
  list: Vector,
  indexOf: (id: number) => number,
  malformed: Malformed,
) {
  const nodeCount = list.length;
  const { u8, u32, f32 } = fb.words;
  const { table, field, target } = fb.tableReader();
  const nodeType = new Uint8Array(nodeCount);
  const nodeInput = new Uint32Array(nodeCount).fill(XNN_INVALID_ID);
  const nodeFilter = new Uint32Array(nodeCount).fill(XNN_INVALID_ID);
  const nodeBias = new Uint32Array(nodeCount).fill(XNN_INVALID_ID);
  const nodeOutput = new Uint32Array(nodeCount).fill(XNN_INVALID_ID);
  const nodeFlags = new Uint32Array(nodeCount);
  const outputMin = new Float32Array(nodeCount).fill(Number.NEGATIVE_INFINITY);
  const outputMax = new Float32Array(nodeCount).fill(Number.POSITIVE_INFINITY);
  /** Field `slot` of table `at`: a value id (absent: 0, the schema default), as an index. */
  const idField = (at: number, slot: number, node: number, optional = false): number => {
    const position = field(at, slot, 4, 'XNode arguments');
    const id = position === 0 ? 0 : (u32[position >> 2] as number);
    if (optional && id === XNN_INVALID_ID) return XNN_INVALID_ID;
    const index = indexOf(id);
    return index >= 0 ? index : malformed(`xnodes[${node}]: no value has id ${id}`);
  };
  for (let n = 0; n < nodeCount; n++) {
    const node = table(list.start + 4 * n + (u32[(list.start >> 2) + n] as number), 'XNode');
    const typeAt = field(node, 0, 1, 'XNode');
    const type = typeAt === 0 ? 0 : (u8[typeAt] as number);
    nodeType[n] = type;
    const argsAt = target(field(node, 1, 4, 'XNode'));
    if (argsAt === 0) malformed(`xnodes[${n}]: no node arguments`);
    const args = table(argsAt, 'XNode.xnode_union');
    const minMaxAt = target(field(node, 3, 4, 'XNode'));
    if (minMaxAt !== 0) {
      const minMax = table(minMaxAt, 'OutputMinMax');
      // Absent fields read as the schema's default, 0.0 (as XNNCompiler reads them).
      const minAt = field(minMax, 0, 4, 'OutputMinMax');
      const maxAt = field(minMax, 1, 4, 'OutputMinMax');
      outputMin[n] = minAt === 0 ? 0 : (f32[minAt >> 2] as number);
      outputMax[n] = maxAt === 0 ? 0 : (f32[maxAt >> 2] as number);
    }
    if (type === XNODE_FULLY_CONNECTED) {
      nodeInput[n] = idField(args, 0, n);
      nodeFilter[n] = idField(args, 1, n);
      nodeBias[n] = idField(args, 2, n, true);
      nodeOutput[n] = idField(args, 3, n);
      const flagsAt = field(args, 4, 4, 'XNNFullyConnected');
      nodeFlags[n] = flagsAt === 0 ? 0 : (u32[flagsAt >> 2] as number);
    } else if (NODE_1X1.has(type)) {
      nodeInput[n] = idField(args, 0, n);
      nodeOutput[n] = idField(args, 1, n);
      const flagsAt = field(args, 2, 4, 'XNode arguments');
      nodeFlags[n] = flagsAt === 0 ? 0 : (u32[flagsAt >> 2] as number);
    }
  }
  return {
    nodeCount,
    nodeType,
    nodeInput,
    nodeFilter,
    nodeBias,
    nodeOutput,
    nodeFlags,
    outputMin,
    outputMax,
  };
}

/** A node type's schema name ("XNNSoftmax"), or its number when the schema has none. */
export function xnodeName(type: number): string {
  return XNODE_NAMES[type] ?? `XNode type ${type}`;
}
