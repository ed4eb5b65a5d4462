// Plain descriptions of an XNNPACK delegate payload, field for field as
// backends/xnnpack/serialization/schema.fbs declares them (camelCase names).

/** backends/xnnpack/serialization/schema.fbs: XNNDatatype xnn_datatype_fp32. */
export const XNN_DATATYPE_FP32 = 1;

/** XNNPACK's value flags (xnnpack.h), as XNNTensorValue.flags carries them. */
export const XNN_VALUE_FLAG_EXTERNAL_INPUT = 1;
export const XNN_VALUE_FLAG_EXTERNAL_OUTPUT = 2;

/** XNNPACK's invalid value id (xnnpack.h XNN_INVALID_VALUE_ID): no external id, no bias. */
export const XNN_INVALID_VALUE_ID = 0xffff_ffff;

/** ConstantDataOffset.offset of a named constant (operators/node_visitor.py: UINT64_MAX). */
export const XNN_NAMED_CONSTANT_OFFSET = 0xffff_ffff_ffff_ffffn;

/**
 * XNodeUnion type numbers: 1-based declaration order in
 * backends/xnnpack/serialization/schema.fbs (union XNodeUnion).
 */
export const XNODE_UNION_TYPE = {
  add: 1,
  fullyConnected: 2,
  softmax: 3,
  sigmoid: 4,
  staticTranspose: 5,
  clamp: 6,
  gelu: 42,
  tanh: 43,
} as const;

export interface XnnTensorValueDescription {
  /** XNNDatatype (1 = fp32). */
  datatype: number;
  /** num_dims is written as dims.length. */
  dims: readonly number[];
  /** Index into constantData; 0 = not a constant. Default 0. */
  constantBufferIdx?: number;
  /** Index into the DelegateCall args; default XNN_INVALID_VALUE_ID. */
  externalId?: number;
  /** XNN_VALUE_FLAG_EXTERNAL_INPUT / _OUTPUT; default 0. */
  flags?: number;
  /** The value's id, which nodes name. */
  idOut: number;
}

export interface XnnOutputMinMax {
  min: number;
  max: number;
}

interface XnnNodeCommon {
  debugHandle?: number;
  /** Clamps the node's output (a fused ReLU is {0, +Infinity}). */
  outputMinMax?: XnnOutputMinMax;
}

export interface XnnFullyConnectedDescription extends XnnNodeCommon {
  kind: 'fullyConnected';
  input1: number;
  /** Filter dims are [out, in]. */
  filter: number;
  /** XNN_INVALID_VALUE_ID when there is no bias. */
  bias: number;
  output: number;
  flags?: number;
}

/** A `_XNNNode1x1` table under any XNodeUnion type (XNNClamp, XNNGelu, XNNSoftmax...). */
export interface XnnNode1x1Description extends XnnNodeCommon {
  kind: 'node1x1';
  /** XNodeUnion type number (see XNODE_UNION_TYPE). */
  type: number;
  input: number;
  output: number;
  flags?: number;
}

export type XnnNodeDescription = XnnFullyConnectedDescription | XnnNode1x1Description;

/**
 * ConstantDataOffset: bytes of the payload's constant region (`offset` from its start), or
 * named data when `namedKey` is set (upstream then writes offset UINT64_MAX).
 */
export interface XnnConstantDataDescription {
  offset: number | bigint;
  size: number | bigint;
  namedKey?: string;
}

export interface XnnGraphDescription {
  /** XNNGraph.version; upstream's xnnpack_preprocess.py writes "0". */
  version?: string;
  values: readonly XnnTensorValueDescription[];
  nodes: readonly XnnNodeDescription[];
  numExterns: number;
  /** id_out of the external inputs / outputs, in definition order. */
  inputIds: readonly number[];
  outputIds: readonly number[];
  /** Entry 0 is the {0, 0, ""} placeholder (constantBufferIdx 0 means "no constant"). */
  constantData: readonly XnnConstantDataDescription[];
  /** The payload's inline constant region, for offset-based entries (older programs). */
  constantBytes?: Uint8Array;
}
