// The few ONNX messages a chain of Gemm + Relu needs. Field numbers are those of
// https://github.com/onnx/onnx/blob/main/onnx/onnx.proto (proto2; stable across IR versions).
import { intField, messageField, stringField } from './protobuf.js';

/** TensorProto.DataType FLOAT. */
export const ONNX_FLOAT = 1;
/** TensorProto.DataLocation EXTERNAL. */
const DATA_LOCATION_EXTERNAL = 1;
/** AttributeProto.AttributeType INT. */
const ATTRIBUTE_INT = 2;

function stringEntry(field: number, key: string, value: string): Uint8Array {
  // StringStringEntryProto: key = 1, value = 2.
  return messageField(field, [stringField(1, key), stringField(2, value)]);
}

/** Where an initializer's bytes are in the external data file. */
export interface ExternalTensor {
  readonly name: string;
  readonly dims: readonly number[];
  /** Path relative to the model's folder. */
  readonly location: string;
  readonly offset: number;
  readonly length: number;
}

/** A TensorProto (as GraphProto.initializer, field 5) whose data is in an external file. */
export function externalInitializer(tensor: ExternalTensor): Uint8Array {
  // TensorProto: dims = 1 (repeated int64, unpacked in proto2), data_type = 2, name = 8,
  // external_data = 13, data_location = 14.
  return messageField(5, [
    ...tensor.dims.map((dim) => intField(1, dim)),
    intField(2, ONNX_FLOAT),
    stringField(8, tensor.name),
    stringEntry(13, 'location', tensor.location),
    stringEntry(13, 'offset', String(tensor.offset)),
    stringEntry(13, 'length', String(tensor.length)),
    intField(14, DATA_LOCATION_EXTERNAL),
  ]);
}

/** A NodeProto (GraphProto.node, field 1) with integer attributes. */
export function node(
  opType: string,
  name: string,
  inputs: readonly string[],
  outputs: readonly string[],
  attributes: Readonly<Record<string, number>> = {},
): Uint8Array {
  // NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5.
  // AttributeProto: name = 1, i = 3, type = 20.
  return messageField(1, [
    ...inputs.map((input) => stringField(1, input)),
    ...outputs.map((output) => stringField(2, output)),
    stringField(3, name),
    stringField(4, opType),
    ...Object.entries(attributes).map(([attribute, value]) =>
      messageField(5, [stringField(1, attribute), intField(3, value), intField(20, ATTRIBUTE_INT)]),
    ),
  ]);
}

/**
 * A ValueInfoProto of an f32 tensor for GraphProto.input (field 11) or output (12); a string
 * dimension is symbolic (dim_param), a number fixed (dim_value).
 */
export function tensorValueInfo(
  field: 11 | 12,
  name: string,
  dims: readonly (number | string)[],
): Uint8Array {
  // ValueInfoProto: name = 1, type = 2. TypeProto: tensor_type = 1. TypeProto.Tensor:
  // elem_type = 1, shape = 2. TensorShapeProto: dim = 1. Dimension: dim_value = 1, dim_param = 2.
  const shape = dims.map((dim) =>
    messageField(1, [typeof dim === 'number' ? intField(1, dim) : stringField(2, dim)]),
  );
  const tensorType = messageField(1, [intField(1, ONNX_FLOAT), messageField(2, shape)]);
  return messageField(field, [stringField(1, name), messageField(2, [tensorType])]);
}

export interface ModelFields {
  readonly irVersion: number;
  readonly opsetVersion: number;
  readonly producer: string;
  readonly graphName: string;
  /** Encoded GraphProto fields: nodes, initializers, inputs, outputs. */
  readonly graph: readonly Uint8Array[];
}

/** A ModelProto with one graph and the default ("ai.onnx") operator set. */
export function model(fields: ModelFields): Uint8Array[] {
  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8.
  // GraphProto: name = 2. OperatorSetIdProto: domain = 1 (absent: the default), version = 2.
  return [
    intField(1, fields.irVersion),
    stringField(2, fields.producer),
    messageField(7, [...fields.graph, stringField(2, fields.graphName)]),
    messageField(8, [intField(2, fields.opsetVersion)]),
  ];
}
