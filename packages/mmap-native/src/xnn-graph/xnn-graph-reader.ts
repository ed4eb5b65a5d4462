// The addon's reader of XNNGraph flatbuffers (the XNNPACK delegate's graph in an
// ExecuTorch program; src/native/xnn-graph/): every offset, vtable and vector checked, the
// graph returned as typed columns over one buffer and the constants' keys as one string.
import { type NativeAddon, tryLoadAddon } from '../backends/posix/addon.js';
import { expectUint8Array } from '../validate.js';

/** An XNNGraph's columns; values are named by their index in xvalues. */
export interface XnnGraphColumns {
  /** Per node: XNodeUnion type, the input, filter, bias and output values (0xffffffff: none), flags. */
  readonly nodeType: Uint8Array;
  readonly nodeInput: Uint32Array;
  readonly nodeFilter: Uint32Array;
  readonly nodeBias: Uint32Array;
  readonly nodeOutput: Uint32Array;
  readonly nodeFlags: Uint32Array;
  /** XNode.output_min_max (-Infinity and +Infinity when absent). */
  readonly outputMin: Float32Array;
  readonly outputMax: Float32Array;
  /** Per value: XNNDatatype, whether quantized, constant_buffer_idx, external_id, flags. */
  readonly datatype: Uint16Array;
  readonly quantized: Uint8Array;
  readonly constantIndex: Uint32Array;
  readonly externalId: Uint32Array;
  readonly valueFlags: Uint32Array;
  /** The dims of value v: dims[dimStart[v] .. dimStart[v + 1]). */
  readonly dimStart: Uint32Array;
  readonly dims: Uint32Array;
  /** XNNGraph.input_ids and output_ids, as value indices. */
  readonly inputIds: Uint32Array;
  readonly outputIds: Uint32Array;
  /** Entries of XNNGraph.constant_data. */
  readonly constantCount: number;
  /**
   * constant_data[index].named_key; null when it has none; undefined when the reader left
   * it to the caller: a key that is not ASCII, or an entry that is malformed (a caller
   * reading keys lazily reports it when the key is asked for).
   */
  namedKey(index: number): string | null | undefined;
}

export interface XnnGraphReader {
  /**
   * The columns of the XNNGraph flatbuffer `bytes` (offsets count from bytes[0]), or a
   * description of what is malformed: no offset in the bytes makes it read outside them.
   */
  read(bytes: Uint8Array): XnnGraphColumns | string;
}

/** What src/native/xnn-graph/xnn-graph-binding.cc returns for a graph it accepts. */
interface NativeColumns {
  readonly columns: ArrayBuffer;
  readonly keys: string;
}

type XnnGraphAddon = NativeAddon & {
  readXnnGraph(bytes: Uint8Array): NativeColumns | string;
};

/** KeyState in src/native/xnn-graph/xnn-graph-columns.h. */
const KEY_IN_KEYS = 0;
const KEY_NONE = 1;
const HEADER_WORDS = 8;

/**
 * The addon's XNNGraph reader, or null when there is no addon with it: a missing or broken
 * addon only means the caller reads the graph in JavaScript.
 */
export function loadXnnGraphReader(): XnnGraphReader | null {
  let addon: Partial<XnnGraphAddon> | null;
  try {
    addon = tryLoadAddon();
  } catch {
    return null;
  }
  const readXnnGraph = addon?.readXnnGraph;
  if (typeof readXnnGraph !== 'function') return null;
  return Object.freeze({
    read(bytes: Uint8Array): XnnGraphColumns | string {
      expectUint8Array(bytes, 'bytes');
      const result = readXnnGraph(bytes);
      return typeof result === 'string' ? result : columnsOf(result);
    },
  });
}

interface TypedArrayType<T> {
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** Views over the columns buffer, in the order xnn-graph-binding.cc writes them. */
function columnsOf({ columns, keys }: NativeColumns): XnnGraphColumns {
  const header = new Uint32Array(columns, 0, HEADER_WORDS);
  const [n, v, dimCount, inputs, outputs, c] = [0, 1, 2, 3, 4, 5].map(
    (i) => header[i] as number,
  ) as [number, number, number, number, number, number];
  let at = header.byteLength;
  const next = <T>(Type: TypedArrayType<T>, length: number): T => {
    const view = new Type(columns, at, length);
    at += length * Type.BYTES_PER_ELEMENT;
    return view;
  };
  const nodeInput = next(Uint32Array, n);
  const nodeFilter = next(Uint32Array, n);
  const nodeBias = next(Uint32Array, n);
  const nodeOutput = next(Uint32Array, n);
  const nodeFlags = next(Uint32Array, n);
  const outputMin = next(Float32Array, n);
  const outputMax = next(Float32Array, n);
  const constantIndex = next(Uint32Array, v);
  const externalId = next(Uint32Array, v);
  const valueFlags = next(Uint32Array, v);
  const dimStart = next(Uint32Array, v + 1);
  const dims = next(Uint32Array, dimCount);
  const inputIds = next(Uint32Array, inputs);
  const outputIds = next(Uint32Array, outputs);
  const keyStart = next(Uint32Array, c + 1);
  const datatype = next(Uint16Array, v);
  const nodeType = next(Uint8Array, n);
  const quantized = next(Uint8Array, v);
  const keyState = next(Uint8Array, c);
  return {
    nodeType,
    nodeInput,
    nodeFilter,
    nodeBias,
    nodeOutput,
    nodeFlags,
    outputMin,
    outputMax,
    datatype,
    quantized,
    constantIndex,
    externalId,
    valueFlags,
    dimStart,
    dims,
    inputIds,
    outputIds,
    constantCount: c,
    namedKey(index: number): string | null | undefined {
      const state = keyState[index];
      if (state === KEY_IN_KEYS) {
        return keys.slice(keyStart[index] as number, keyStart[index + 1] as number);
      }
      return state === KEY_NONE ? null : undefined;
    },
  };
}
