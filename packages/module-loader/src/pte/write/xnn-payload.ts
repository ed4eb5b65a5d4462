import { u32 } from './field-values.js';
import { alignUp } from './padding.js';
import type { XnnGraphDescription } from './xnn-graph-description.js';
import { encodeXnnGraphFlatbuffer } from './xnn-graph-flatbuffer.js';
import { encodeXnnHeader, XNN_HEADER_LENGTH } from './xnn-header.js';

/** xnnpack_graph_serialize.py: CONSTANT_TENSOR_ALIGNMENT pads the header and the flatbuffer. */
export const XNN_CONSTANT_TENSOR_ALIGNMENT = 16;

/**
 * An XNNPACK delegate payload: the XH00 header padded to 32 bytes, the XNNGraph flatbuffer
 * padded to 16, then the inline constant region (xnnpack_graph_serialize.py:
 * serialize_xnnpack_binary; nothing pads the end).
 */
export function encodeXnnPayload(graph: XnnGraphDescription): Uint8Array {
  const flatbuffer = encodeXnnGraphFlatbuffer(graph);
  const constants = graph.constantBytes ?? new Uint8Array(0);
  const headerLength = alignUp(XNN_HEADER_LENGTH, XNN_CONSTANT_TENSOR_ALIGNMENT);
  const flatbufferLength = alignUp(flatbuffer.length, XNN_CONSTANT_TENSOR_ALIGNMENT);
  const constantDataOffset = headerLength + flatbufferLength;
  const header = encodeXnnHeader({
    flatbufferOffset: headerLength,
    flatbufferSize: flatbuffer.length,
    // The header's u32 field bounds where the constant region may start.
    constantDataOffset: u32(constantDataOffset, 'the payload constant data offset'),
    constantDataSize: constants.length,
  });
  const out = new Uint8Array(constantDataOffset + constants.length);
  out.set(header, 0);
  out.set(flatbuffer, headerLength);
  out.set(constants, constantDataOffset);
  return out;
}
