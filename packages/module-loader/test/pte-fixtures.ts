// Builds small ExecuTorch programs field by field the way ExecuTorch lowers an MLP to
// XNNPACK: one delegate holding the whole graph, constants as named data keyed by the
// SHA-256 of their bytes, a ReLU after a linear layer fused into its output min/max.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ExecutionPlanDescription,
  encodePtd,
  encodePte,
  encodeXnnPayload,
  type NamedDataEntry,
  SCALAR_TYPE_FLOAT,
  XNN_DATATYPE_FP32,
  XNN_INVALID_VALUE_ID,
  XNN_NAMED_CONSTANT_OFFSET,
  XNODE_UNION_TYPE,
  type XnnConstantDataDescription,
  type XnnNodeDescription,
  type XnnTensorValueDescription,
} from './pte-writer.js';

export interface Layer {
  weight: Float32Array; // [out, in]
  bias: Float32Array | null;
  out: number;
  in: number;
  /** Fused into the FC node (output_min_max), or a standalone XNNClamp after it. */
  relu?: 'fused' | 'clamp' | undefined;
}

export interface MlpOptions {
  /** Where constants live: a .ptd (default), the .pte's named data, or the payload by offset. */
  constants?: 'ptd' | 'pte' | 'offset';
  /** Extra 1x1 node appended after the last layer (e.g. XNNSoftmax = 3, XNNGelu = 42). */
  tail?: number;
  /** A kernel call after the delegate call (e.g. aten::add.out). */
  kernel?: { name: string; overload: string };
  method?: string;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const bytesOf = (array: Float32Array) =>
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** Deterministic layers: sizes[i] → sizes[i+1], each with a bias. */
export function makeLayers(sizes: number[], seed = 1, relu: Layer['relu'] = 'fused'): Layer[] {
  let state = seed >>> 0 || 1;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
  const layers: Layer[] = [];
  for (let i = 0; i + 1 < sizes.length; i++) {
    const inF = sizes[i] as number;
    const out = sizes[i + 1] as number;
    const weight = Float32Array.from({ length: out * inF }, next);
    const bias = Float32Array.from({ length: out }, next);
    layers.push({ weight, bias, out, in: inF, relu: i + 2 < sizes.length ? relu : undefined });
  }
  return layers;
}

/** The program's output in plain JavaScript (f32 rounding after each layer, as the operator). */
export function reference(layers: Layer[], input: Float32Array, rows: number): Float32Array {
  let x = input;
  for (const layer of layers) {
    const y = new Float32Array(rows * layer.out);
    for (let r = 0; r < rows; r++) {
      for (let o = 0; o < layer.out; o++) {
        let sum = 0;
        for (let i = 0; i < layer.in; i++)
          sum += (x[r * layer.in + i] as number) * (layer.weight[o * layer.in + i] as number);
        y[r * layer.out + o] = sum + (layer.bias?.[o] ?? 0);
      }
    }
    if (layer.relu !== undefined)
      for (let i = 0; i < y.length; i++) if ((y[i] as number) < 0) y[i] = 0;
    x = y;
  }
  return x;
}

/** Writes `<dir>/<name>.pte` (and `.ptd` unless constants live elsewhere). */
export function writeMlp(
  dir: string,
  name: string,
  layers: Layer[],
  options: MlpOptions = {},
): { pte: string; ptd: string | null; keys: string[] } {
  const constants = options.constants ?? 'ptd';
  const values: XnnTensorValueDescription[] = [];
  const nodes: XnnNodeDescription[] = [];
  const constantData: XnnConstantDataDescription[] = [{ offset: 0, size: 0, namedKey: '' }];
  const named: NamedDataEntry[] = [];
  const inline: Uint8Array[] = [];
  let inlineSize = 0;
  const keys: string[] = [];
  const first = layers[0] as Layer;
  const addValue = (value: Omit<XnnTensorValueDescription, 'idOut' | 'datatype'>) => {
    values.push({ datatype: XNN_DATATYPE_FP32, ...value, idOut: values.length });
    return values.length - 1;
  };
  const addConstant = (data: Float32Array, dims: number[]) => {
    const bytes = bytesOf(data);
    const key = sha256(bytes);
    keys.push(key);
    if (constants === 'offset') {
      constantData.push({ offset: inlineSize, size: bytes.byteLength });
      inline.push(bytes);
      inlineSize += Math.ceil(bytes.byteLength / 16) * 16;
      inline.push(new Uint8Array(Math.ceil(bytes.byteLength / 16) * 16 - bytes.byteLength));
    } else {
      constantData.push({
        offset: XNN_NAMED_CONSTANT_OFFSET,
        size: bytes.byteLength,
        namedKey: key,
      });
      if (!named.some((entry) => entry.key === key)) named.push({ key, bytes });
    }
    return addValue({ dims, constantBufferIdx: constantData.length - 1 });
  };
  let current = addValue({ dims: [1, first.in], externalId: 0, flags: 1 });
  const inputId = current;
  const last = layers.length - 1;
  layers.forEach((layer, index) => {
    const filter = addConstant(layer.weight, [layer.out, layer.in]);
    const bias = layer.bias === null ? XNN_INVALID_VALUE_ID : addConstant(layer.bias, [layer.out]);
    const isOutput = index === last && options.tail === undefined && layer.relu !== 'clamp';
    const output = addValue(
      isOutput ? { dims: [1, layer.out], externalId: 1, flags: 2 } : { dims: [1, layer.out] },
    );
    nodes.push({
      kind: 'fullyConnected',
      input1: current,
      filter,
      bias,
      output,
      ...(layer.relu === 'fused'
        ? { outputMinMax: { min: 0, max: Number.POSITIVE_INFINITY } }
        : {}),
    });
    current = output;
    if (layer.relu === 'clamp') {
      const clampOut = addValue(
        index === last && options.tail === undefined
          ? { dims: [1, layer.out], externalId: 1, flags: 2 }
          : { dims: [1, layer.out] },
      );
      nodes.push({
        kind: 'node1x1',
        type: XNODE_UNION_TYPE.clamp,
        input: current,
        output: clampOut,
        outputMinMax: { min: 0, max: Number.POSITIVE_INFINITY },
      });
      current = clampOut;
    }
  });
  if (options.tail !== undefined) {
    const out = addValue({ dims: [1, (layers[last] as Layer).out], externalId: 1, flags: 2 });
    nodes.push({ kind: 'node1x1', type: options.tail, input: current, output: out });
    current = out;
  }
  const constantBytes = new Uint8Array(inlineSize);
  let at = 0;
  for (const part of inline) {
    constantBytes.set(part, at);
    at += part.byteLength;
  }
  const payload = encodeXnnPayload({
    version: '0',
    values,
    nodes,
    numExterns: 2,
    inputIds: [inputId],
    outputIds: [current],
    constantData,
    ...(constants === 'offset' ? { constantBytes } : {}),
  });
  const outF = (layers[last] as Layer).out;
  const plan: ExecutionPlanDescription = {
    name: options.method ?? 'forward',
    values: [
      {
        kind: 'tensor',
        scalarType: SCALAR_TYPE_FLOAT,
        sizes: [1, first.in],
        dimOrder: [0, 1],
        allocation: { memoryId: 1, offset: 0 },
      },
      {
        kind: 'tensor',
        scalarType: SCALAR_TYPE_FLOAT,
        sizes: [1, outF],
        dimOrder: [0, 1],
        allocation: { memoryId: 1, offset: 4 * first.in },
      },
    ],
    inputs: [0],
    outputs: [1],
    instructions: [
      { kind: 'delegateCall', delegateIndex: 0, args: [0, 1] },
      ...(options.kernel ? [{ kind: 'kernelCall' as const, opIndex: 0, args: [1, 1] }] : []),
    ],
    operators: options.kernel ? [options.kernel] : [],
    delegates: [{ id: 'XnnpackBackend', payload }],
    nonConstBufferSizes: [0, 4 * (first.in + outF)],
  };
  const pte = join(dir, `${name}.pte`);
  writeFileSync(
    pte,
    encodePte({ plans: [plan], ...(constants === 'pte' ? { namedData: named } : {}) }),
  );
  let ptd: string | null = null;
  if (constants === 'ptd') {
    ptd = join(dir, `${name}.ptd`);
    writeFileSync(ptd, encodePtd(named));
  }
  return { pte, ptd, keys };
}

/** xorshift32 numbers in [0, 1): a fuzz test's cases are the same on every run. */
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}
