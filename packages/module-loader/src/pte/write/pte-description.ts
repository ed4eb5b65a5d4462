// Plain descriptions of an ExecuTorch program, field for field as schema/program.fbs
// declares them (camelCase names); encodePte places the bytes.

/** schema/scalar_type.fbs: ScalarType FLOAT. */
export const SCALAR_TYPE_FLOAT = 6;
/** schema/program.fbs: TensorShapeDynamism. */
export const SHAPE_DYNAMISM = { static: 0, dynamicBound: 1, dynamicUnbound: 2 } as const;
/** runtime/executor/tensor_parser_exec_aten.cpp: memory_id 0 is reserved; planned buffers start at 1. */
export const FIRST_PLANNED_MEMORY_ID = 1;

export interface TensorAllocation {
  /** Index into non_const_buffer_sizes (1 = the first planned buffer). */
  memoryId: number;
  /** Byte offset in that buffer; written as memory_offset_low / memory_offset_high. */
  offset: number;
}

export interface TensorEValueDescription {
  kind: 'tensor';
  /** ScalarType (6 = FLOAT). */
  scalarType: number;
  sizes: readonly number[];
  dimOrder: readonly number[];
  allocation?: TensorAllocation;
  /** TensorShapeDynamism; default STATIC. */
  shapeDynamism?: number;
  /** Index into the constant segment's offsets; 0 = none (the default). */
  dataBufferIdx?: number;
}

export type EValueDescription =
  | { kind: 'null' }
  | { kind: 'int'; value: number | bigint }
  | { kind: 'bool'; value: boolean }
  | { kind: 'double'; value: number }
  | { kind: 'string'; value: string }
  | TensorEValueDescription;

export type InstructionDescription =
  | { kind: 'kernelCall'; opIndex: number; args: readonly number[] }
  | { kind: 'delegateCall'; delegateIndex: number; args: readonly number[] };

export interface OperatorDescription {
  name: string;
  overload: string;
}

export interface CompileSpecDescription {
  key: string;
  value: Uint8Array;
}

export interface DelegateDescription {
  /** Backend id, e.g. "XnnpackBackend". */
  id: string;
  /** The processed blob (for XNNPACK, an encodeXnnPayload result). */
  payload: Uint8Array;
  /** 'segment' (default, as serialize_pte_binary extracts it) or 'inline'. */
  location?: 'segment' | 'inline';
  compileSpecs?: readonly CompileSpecDescription[];
}

export interface ExecutionPlanDescription {
  /** Method name, e.g. "forward". */
  name: string;
  values: readonly EValueDescription[];
  /** Indices into `values`. */
  inputs: readonly number[];
  outputs: readonly number[];
  /** Chain 0's instructions (the chain's inputs/outputs are the plan's). */
  instructions: readonly InstructionDescription[];
  operators?: readonly OperatorDescription[];
  delegates?: readonly DelegateDescription[];
  /** Entry 0 is reserved (0); entry i is planned buffer i's size. */
  nonConstBufferSizes: readonly (number | bigint)[];
}

export interface NamedDataEntry {
  key: string;
  bytes: Uint8Array;
  /** Alignment of the bytes in the file; default 16 (XNNPACK's CONSTANT_TENSOR_ALIGNMENT). */
  alignment?: number;
}

export interface PteDescription {
  /** Program.version; exir/version.py EXECUTORCH_SCHEMA_VERSION is 0. */
  version?: number;
  plans: readonly ExecutionPlanDescription[];
  /** Program.named_data, each unique buffer in its own segment. */
  namedData?: readonly NamedDataEntry[];
  /**
   * false: no eh00 header (the whole file is the flatbuffer); only possible when no
   * segment holds bytes. Default true: the header is written when a segment holds bytes.
   */
  extendedHeader?: boolean;
}
