import { ModuleLoaderError } from '../errors.js';

export interface F32TensorInput {
  name: string;
  shape: number[];
  data: Float32Array;
}

/**
 * Encodes f32 tensors as a safetensors file. The header is padded with spaces so the
 * data region starts 8-byte aligned (which keeps every f32 tensor 4-byte aligned and
 * lets a reader view mapped weights in place).
 */
export function encodeSafetensors(
  tensors: readonly F32TensorInput[],
  metadata: Record<string, string> = {},
): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header['__metadata__'] = metadata;
  let cursor = 0;
  for (const tensor of tensors) {
    const elements = tensor.shape.reduce((product, size) => product * size, 1);
    if (elements !== tensor.data.length) {
      throw new ModuleLoaderError(
        'ERR_INVALID_INPUT',
        `Expected ${elements} values for tensor "${tensor.name}" of shape [${tensor.shape.join(', ')}] but received ${tensor.data.length}`,
        { field: tensor.name },
      );
    }
    header[tensor.name] = {
      dtype: 'F32',
      shape: tensor.shape,
      data_offsets: [cursor, cursor + tensor.data.byteLength],
    };
    cursor += tensor.data.byteLength;
  }
  let json = JSON.stringify(header);
  const unpadded = 8 + Buffer.byteLength(json);
  json += ' '.repeat((8 - (unpadded % 8)) % 8);
  const headerBytes = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + headerBytes.byteLength + cursor);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let offset = 8 + headerBytes.byteLength;
  for (const tensor of tensors) {
    out.set(
      new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength),
      offset,
    );
    offset += tensor.data.byteLength;
  }
  return out;
}
