// XNNGraph flatbuffers the exporter does not write, for comparing the two graph readers:
// quantized values (XNNQuantizedTensorValue wraps the tensor), and values that share one
// dims vector (a flatbuffer may point many tables at one vector).

import { offsetVector, uint32Vector } from '../src/pte/write/flatbuffer-vectors.js';
import { newFlatbufferBuilder } from '../src/pte/write/flatbuffers-runtime.js';

const FULLY_CONNECTED = 2;
const INVALID = 0xffffffff;

/**
 * input (0) → fully connected with a quantized filter (1, constant 1) → quantized output
 * (2). With `sharedDims`, that many more values all point at one dims vector of 1000.
 */
export function quantizedGraph(sharedDims = 0): Uint8Array {
  const builder = newFlatbufferBuilder();
  const shared = sharedDims > 0 ? uint32Vector(builder, new Array<number>(1000).fill(3)) : 0;
  const value = (id: number, dims: number, options: { quantized?: boolean; constant?: number }) => {
    // schema.fbs XNNTensorValue: datatype, num_dims, dims, constant_buffer_idx, external_id, flags, id_out.
    builder.startObject(7);
    builder.addFieldInt16(0, 1, 0);
    builder.addFieldOffset(2, dims, 0);
    builder.addFieldInt32(3, options.constant ?? 0, 0);
    builder.addFieldInt32(6, id, 0);
    let union = builder.endObject();
    if (options.quantized === true) {
      // XNNQuantizedTensorValue: tensor_value first (quant_params are not read).
      builder.startObject(3);
      builder.addFieldOffset(0, union, 0);
      union = builder.endObject();
    }
    builder.startObject(2);
    builder.addFieldInt8(0, options.quantized === true ? 2 : 1, 0);
    builder.addFieldOffset(1, union, 0);
    return builder.endObject();
  };
  const values = [
    value(0, uint32Vector(builder, [1, 3]), {}),
    value(1, uint32Vector(builder, [2, 3]), { quantized: true, constant: 1 }),
    value(2, uint32Vector(builder, [1, 2]), { quantized: true }),
  ];
  for (let i = 0; i < sharedDims; i++) values.push(value(3 + i, shared, {}));
  builder.startObject(5);
  for (const [slot, id] of [0, 1, INVALID, 2].entries()) builder.addFieldInt32(slot, id | 0, 0);
  const args = builder.endObject();
  builder.startObject(2);
  builder.addFieldInt8(0, FULLY_CONNECTED, 0);
  builder.addFieldOffset(1, args, 0);
  const node = builder.endObject();
  const key = (text: string) => {
    const named = builder.createString(text);
    // ConstantDataOffset: offset, size, named_key.
    builder.startObject(3);
    builder.addFieldOffset(2, named, 0);
    return builder.endObject();
  };
  const constants = [key(''), key('quantized-filter')];
  const nodes = offsetVector(builder, [node]);
  const valueList = offsetVector(builder, values);
  const inputs = uint32Vector(builder, [0]);
  const outputs = uint32Vector(builder, [2]);
  const constantList = offsetVector(builder, constants);
  // XNNGraph: version, xnodes, xvalues, num_externs, input_ids, output_ids, 2 deprecated, constant_data.
  builder.startObject(9);
  builder.addFieldOffset(1, nodes, 0);
  builder.addFieldOffset(2, valueList, 0);
  builder.addFieldOffset(4, inputs, 0);
  builder.addFieldOffset(5, outputs, 0);
  builder.addFieldOffset(8, constantList, 0);
  builder.finish(builder.endObject(), 'XN01');
  return builder.asUint8Array().slice();
}
