// The bench's model (model.ts) as an ONNX model: per layer a Gemm (transB = 1, so the weight
// keeps its [out, in] layout, as torch.nn.Linear exports it) and, with `relu`, a Relu. The
// initializers are the same bytes as the safetensors files, in one external data file.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { layerWeights, type ModelOptions } from '../model.js';
import type { ModelSpec } from '../types.js';
import { externalInitializer, model, node, tensorValueInfo } from './onnx-messages.js';
import { concatBytes } from './protobuf.js';

/** ir_version 8 with opset 17: the pair ONNX 1.12 writes (Gemm-13 and Relu-14 are current). */
const IR_VERSION = 8;
const OPSET_VERSION = 17;
/**
 * Offsets of external initializers on page boundaries: onnxruntime maps such initializers
 * instead of copying them (include/onnxruntime/core/graph/model_saving_options.h: "4K for
 * other OSes" than Windows).
 */
export const EXTERNAL_DATA_ALIGNMENT = 4096;
/** The graph's batch dimension is symbolic: one model serves every batch size. */
const BATCH = 'batch';
export const ONNX_INPUT = 'x';

export interface OnnxFiles {
  readonly model: string;
  readonly data: string;
  /** Name of the graph's output. */
  readonly output: string;
}

const alignUp = (value: number) =>
  Math.ceil(value / EXTERNAL_DATA_ALIGNMENT) * EXTERNAL_DATA_ALIGNMENT;

/** The files writeOnnxMlp writes for `spec` into `dir`. */
export function onnxMlpFiles(dir: string, spec: ModelSpec, name = 'model'): OnnxFiles {
  return {
    model: join(dir, `${name}.onnx`),
    data: join(dir, `${name}.onnx.data`),
    output: `h${spec.layers - 1}`,
  };
}

/** Writes `<name>.onnx` and `<name>.onnx.data` into `dir` (the model last). */
export function writeOnnxMlp(
  dir: string,
  spec: ModelSpec,
  options: ModelOptions = {},
  name = 'model',
): OnnxFiles {
  mkdirSync(dir, { recursive: true });
  const files = onnxMlpFiles(dir, spec, name);
  const location = basename(files.data);
  const data = files.data;
  const nodes: Uint8Array[] = [];
  const initializers: Uint8Array[] = [];
  let offset = 0;
  let value = ONNX_INPUT;
  const fd = openSync(data, 'w');
  try {
    // One layer's tensors at a time: the writer holds one layer, whatever the model's size.
    const put = (tensorName: string, dims: number[], values: Float32Array) => {
      const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
      writeSync(fd, bytes, 0, bytes.byteLength, offset);
      initializers.push(
        externalInitializer({ name: tensorName, dims, location, offset, length: bytes.byteLength }),
      );
      offset = alignUp(offset + bytes.byteLength);
    };
    for (let layer = 0; layer < spec.layers; layer++) {
      const { weight, bias } = layerWeights(spec, layer, options);
      put(`l${layer}.weight`, [spec.dim, spec.dim], weight);
      put(`l${layer}.bias`, [spec.dim], bias);
      const gemmOut = options.relu === true ? `z${layer}` : `h${layer}`;
      nodes.push(
        node('Gemm', `gemm${layer}`, [value, `l${layer}.weight`, `l${layer}.bias`], [gemmOut], {
          transB: 1,
        }),
      );
      if (options.relu === true) nodes.push(node('Relu', `relu${layer}`, [gemmOut], [`h${layer}`]));
      value = `h${layer}`;
    }
  } finally {
    closeSync(fd);
  }
  const encoded = model({
    irVersion: IR_VERSION,
    opsetVersion: OPSET_VERSION,
    producer: 'memlayer-bench',
    graphName: 'mlp',
    graph: [
      ...nodes,
      ...initializers,
      tensorValueInfo(11, ONNX_INPUT, [BATCH, spec.dim]),
      tensorValueInfo(12, value, [BATCH, spec.dim]),
    ],
  });
  writeFileSync(files.model, concatBytes(encoded));
  return files;
}
