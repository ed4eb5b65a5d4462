import { u32, u64, uintUpTo, unionType } from './field-values.js';
import { offsetVector, uint32Vector } from './flatbuffer-vectors.js';
import { type FlatbufferBuilder, newFlatbufferBuilder } from './flatbuffers-runtime.js';
import {
  XNN_INVALID_VALUE_ID,
  type XnnConstantDataDescription,
  type XnnGraphDescription,
  type XnnNodeDescription,
  type XnnTensorValueDescription,
} from './xnn-graph-description.js';

// Slot numbers are the field indices of backends/xnnpack/serialization/schema.fbs (a union
// takes two slots: its type, then its value; deprecated fields keep theirs). Each table's
// children are written first, then its fields in declaration order.

/** backends/xnnpack/serialization/schema.fbs: file_identifier "XN01". */
export const XNN_FILE_IDENTIFIER = 'XN01';

/** backends/xnnpack/serialization/schema.fbs: union XValueUnion { XNNTensorValue = 1 }. */
const XVALUE_UNION_TENSOR = 1;
/** schema.fbs: XNodeUnion XNNFullyConnected is the 2nd member. */
const XNODE_UNION_FULLY_CONNECTED = 2;

/** The XNNGraph flatbuffer (root XNNGraph, identifier XN01) of a description. */
export function encodeXnnGraphFlatbuffer(graph: XnnGraphDescription): Uint8Array {
  const builder = newFlatbufferBuilder();
  // schema.fbs: XNNGraph fields version, xnodes, xvalues, num_externs, input_ids,
  // output_ids, constant_buffer (deprecated), mem_buffer_sizes (deprecated), constant_data.
  const version = builder.createString(graph.version ?? '0');
  const nodes = offsetVector(
    builder,
    graph.nodes.map((node, i) => writeNode(builder, node, `nodes[${i}]`)),
  );
  const values = offsetVector(
    builder,
    graph.values.map((value, i) => writeValue(builder, value, `values[${i}]`)),
  );
  const inputIds = uint32Vector(
    builder,
    graph.inputIds.map((id, i) => u32(id, `inputIds[${i}]`)),
  );
  const outputIds = uint32Vector(
    builder,
    graph.outputIds.map((id, i) => u32(id, `outputIds[${i}]`)),
  );
  const constantData = offsetVector(
    builder,
    graph.constantData.map((entry, i) => writeConstantData(builder, entry, `constantData[${i}]`)),
  );
  builder.startObject(9);
  builder.addFieldOffset(0, version, 0);
  builder.addFieldOffset(1, nodes, 0);
  builder.addFieldOffset(2, values, 0);
  builder.addFieldInt32(3, u32(graph.numExterns, 'numExterns'), 0);
  builder.addFieldOffset(4, inputIds, 0);
  builder.addFieldOffset(5, outputIds, 0);
  builder.addFieldOffset(8, constantData, 0);
  builder.finish(builder.endObject(), XNN_FILE_IDENTIFIER);
  return builder.asUint8Array();
}

/** schema.fbs: XValue{xvalue_union} holding an XNNTensorValue. */
function writeValue(builder: FlatbufferBuilder, value: XnnTensorValueDescription, what: string) {
  // schema.fbs: XNNTensorValue fields datatype (short), num_dims, dims, constant_buffer_idx,
  // external_id, flags, id_out.
  const dims = uint32Vector(
    builder,
    value.dims.map((dim, i) => u32(dim, `${what}.dims[${i}]`)),
  );
  builder.startObject(7);
  builder.addFieldInt16(0, uintUpTo(value.datatype, 0x7fff, `${what}.datatype`), 0);
  builder.addFieldInt32(1, value.dims.length, 0);
  builder.addFieldOffset(2, dims, 0);
  builder.addFieldInt32(3, u32(value.constantBufferIdx ?? 0, `${what}.constantBufferIdx`), 0);
  builder.addFieldInt32(
    4,
    u32(value.externalId ?? XNN_INVALID_VALUE_ID, `${what}.externalId`) | 0,
    0,
  );
  builder.addFieldInt32(5, u32(value.flags ?? 0, `${what}.flags`) | 0, 0);
  builder.addFieldInt32(6, u32(value.idOut, `${what}.idOut`) | 0, 0);
  const tensor = builder.endObject();
  builder.startObject(2);
  builder.addFieldInt8(0, XVALUE_UNION_TENSOR, 0);
  builder.addFieldOffset(1, tensor, 0);
  return builder.endObject();
}

/** schema.fbs: XNode{xnode_union, debug_handle, output_min_max}. */
function writeNode(builder: FlatbufferBuilder, node: XnnNodeDescription, what: string) {
  let type: number;
  let body: number;
  if (node.kind === 'fullyConnected') {
    type = XNODE_UNION_FULLY_CONNECTED;
    // schema.fbs: XNNFullyConnected fields input1_id, filter_id, bias_id, output_id, flags.
    builder.startObject(5);
    builder.addFieldInt32(0, u32(node.input1, `${what}.input1`) | 0, 0);
    builder.addFieldInt32(1, u32(node.filter, `${what}.filter`) | 0, 0);
    builder.addFieldInt32(2, u32(node.bias, `${what}.bias`) | 0, 0);
    builder.addFieldInt32(3, u32(node.output, `${what}.output`) | 0, 0);
    builder.addFieldInt32(4, u32(node.flags ?? 0, `${what}.flags`) | 0, 0);
    body = builder.endObject();
  } else {
    // schema.fbs: union members are numbered from 1; a ubyte holds the type.
    type = unionType(node.type, `${what}.type`);
    // schema.fbs: _XNNNode1x1 fields input_id, output_id, flags.
    builder.startObject(3);
    builder.addFieldInt32(0, u32(node.input, `${what}.input`) | 0, 0);
    builder.addFieldInt32(1, u32(node.output, `${what}.output`) | 0, 0);
    builder.addFieldInt32(2, u32(node.flags ?? 0, `${what}.flags`) | 0, 0);
    body = builder.endObject();
  }
  let minMax = 0;
  if (node.outputMinMax !== undefined) {
    // schema.fbs: OutputMinMax fields output_min, output_max (float).
    builder.startObject(2);
    builder.addFieldFloat32(0, node.outputMinMax.min, 0);
    builder.addFieldFloat32(1, node.outputMinMax.max, 0);
    minMax = builder.endObject();
  }
  builder.startObject(4);
  builder.addFieldInt8(0, type, 0);
  builder.addFieldOffset(1, body, 0);
  if (node.debugHandle !== undefined) {
    builder.addFieldInt32(2, u32(node.debugHandle, `${what}.debugHandle`) | 0, 0);
  }
  if (minMax !== 0) builder.addFieldOffset(3, minMax, 0);
  return builder.endObject();
}

/** schema.fbs: ConstantDataOffset fields offset (uint64), size (uint64), named_key. */
function writeConstantData(
  builder: FlatbufferBuilder,
  entry: XnnConstantDataDescription,
  what: string,
) {
  const key = entry.namedKey === undefined ? 0 : builder.createString(entry.namedKey);
  builder.startObject(3);
  builder.addFieldInt64(0, u64(entry.offset, `${what}.offset`), 0n);
  builder.addFieldInt64(1, u64(entry.size, `${what}.size`), 0n);
  if (entry.namedKey !== undefined) builder.addFieldOffset(2, key, 0);
  return builder.endObject();
}
