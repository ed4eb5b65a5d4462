import { invalidArgument } from '../../errors.js';
import { i32, i64, u32, u64, uintUpTo } from './field-values.js';
import {
  byteVector,
  dataSegmentVector,
  int64Vector,
  namedDataVector,
  offsetVector,
  uint32Vector,
} from './flatbuffer-vectors.js';
import { type FlatbufferBuilder, newFlatbufferBuilder } from './flatbuffers-runtime.js';
import type {
  DelegateDescription,
  EValueDescription,
  ExecutionPlanDescription,
  InstructionDescription,
} from './pte-description.js';

// Slot numbers are the field indices of schema/program.fbs (a union takes two slots: its
// type, then its value). Each table's children are written first, then its fields in
// declaration order, as the flatc-generated object API's Pack does.

/** schema/program.fbs: file_identifier "ET12" (runtime/executor/program.cpp requires it). */
export const PROGRAM_FILE_IDENTIFIER = 'ET12';
/** schema/program.fbs: BackendDelegateInlineData.data force_align 16 (@executorch-delegate-alignment). */
const DELEGATE_INLINE_ALIGNMENT = 16;

/** schema/program.fbs: union KernelTypes member numbers. */
const KERNEL_TYPES = { null: 1, int: 2, bool: 3, double: 4, tensor: 5, string: 6 } as const;
/** schema/program.fbs: union InstructionArguments member numbers. */
const INSTRUCTION_ARGUMENTS = { kernelCall: 1, delegateCall: 2 } as const;
/** schema/program.fbs: enum DataLocation. */
export const DATA_LOCATION = { inline: 0, segment: 1 } as const;

export interface DelegateReference {
  location: number;
  index: number;
}

/** Everything of a Program once segments are placed. */
export interface ProgramTables {
  version: number;
  plans: readonly ExecutionPlanDescription[];
  /** processed reference of each plan's each delegate. */
  delegateReferences: readonly (readonly DelegateReference[])[];
  inlineDelegateData: readonly Uint8Array[];
  segments: readonly { offset: number; size: number }[];
  constantSegment: { segmentIndex: number; offsets: readonly bigint[] };
  /** null: no named_data field. */
  namedData: readonly { key: string; segmentIndex: number }[] | null;
}

/** The Program flatbuffer (root Program, identifier ET12), without the extended header. */
export function encodeProgramFlatbuffer(tables: ProgramTables): Uint8Array {
  const builder = newFlatbufferBuilder();
  // schema/program.fbs: Program fields version, execution_plan, constant_buffer,
  // backend_delegate_data, segments, constant_segment, mutable_data_segments, named_data.
  const plans = offsetVector(
    builder,
    tables.plans.map((plan, i) =>
      writePlan(builder, plan, tables.delegateReferences[i] ?? [], `plans[${i}]`),
    ),
  );
  // exir/schema.py: constant_buffer is a list (emptied once constants move to segment 0);
  // mutable_data_segments stays None, so it is not written.
  const constantBuffer = offsetVector(builder, []);
  const inlineData = offsetVector(
    builder,
    tables.inlineDelegateData.map((bytes) => {
      const data = byteVector(builder, bytes, DELEGATE_INLINE_ALIGNMENT);
      builder.startObject(1);
      builder.addFieldOffset(0, data, 0);
      return builder.endObject();
    }),
  );
  const segments = dataSegmentVector(builder, tables.segments);
  // schema/program.fbs: SubsegmentOffsets fields segment_index, offsets (uint64).
  const constantOffsets = int64Vector(builder, tables.constantSegment.offsets);
  builder.startObject(2);
  builder.addFieldInt32(0, tables.constantSegment.segmentIndex, 0);
  builder.addFieldOffset(1, constantOffsets, 0);
  const constantSegment = builder.endObject();
  let namedData = 0;
  if (tables.namedData !== null) {
    namedData = namedDataVector(builder, tables.namedData, 2);
  }
  builder.startObject(8);
  builder.addFieldInt32(0, u32(tables.version, 'version'), 0);
  builder.addFieldOffset(1, plans, 0);
  builder.addFieldOffset(2, constantBuffer, 0);
  builder.addFieldOffset(3, inlineData, 0);
  builder.addFieldOffset(4, segments, 0);
  builder.addFieldOffset(5, constantSegment, 0);
  if (namedData !== 0) builder.addFieldOffset(7, namedData, 0);
  builder.finish(builder.endObject(), PROGRAM_FILE_IDENTIFIER);
  return builder.asUint8Array();
}

function writePlan(
  builder: FlatbufferBuilder,
  plan: ExecutionPlanDescription,
  references: readonly DelegateReference[],
  what: string,
): number {
  // schema/program.fbs: ExecutionPlan fields name, container_meta_type, values, inputs,
  // outputs, chains, operators, delegates, non_const_buffer_sizes, non_const_buffer_device.
  const name = builder.createString(plan.name);
  const values = offsetVector(
    builder,
    plan.values.map((value, i) => writeEValue(builder, value, `${what}.values[${i}]`)),
  );
  const inputs = indexVector(builder, plan.inputs, `${what}.inputs`);
  const outputs = indexVector(builder, plan.outputs, `${what}.outputs`);
  const chain = writeChain(builder, plan, what);
  const chains = offsetVector(builder, [chain]);
  const operators = offsetVector(
    builder,
    (plan.operators ?? []).map((operator) => {
      // schema/program.fbs: Operator fields name, overload.
      const opName = builder.createString(operator.name);
      const overload = builder.createString(operator.overload);
      builder.startObject(2);
      builder.addFieldOffset(0, opName, 0);
      builder.addFieldOffset(1, overload, 0);
      return builder.endObject();
    }),
  );
  const delegates = offsetVector(
    builder,
    (plan.delegates ?? []).map((delegate, i) =>
      writeDelegate(builder, delegate, references[i] as DelegateReference),
    ),
  );
  const bufferSizes = int64Vector(
    builder,
    plan.nonConstBufferSizes.map((size, i) => i64(size, `${what}.nonConstBufferSizes[${i}]`)),
  );
  builder.startObject(10);
  builder.addFieldOffset(0, name, 0);
  builder.addFieldOffset(2, values, 0);
  builder.addFieldOffset(3, inputs, 0);
  builder.addFieldOffset(4, outputs, 0);
  builder.addFieldOffset(5, chains, 0);
  builder.addFieldOffset(6, operators, 0);
  builder.addFieldOffset(7, delegates, 0);
  builder.addFieldOffset(8, bufferSizes, 0);
  return builder.endObject();
}

/** schema/program.fbs: Chain fields inputs, outputs, instructions, stacktrace. */
function writeChain(builder: FlatbufferBuilder, plan: ExecutionPlanDescription, what: string) {
  const inputs = indexVector(builder, plan.inputs, `${what}.inputs`);
  const outputs = indexVector(builder, plan.outputs, `${what}.outputs`);
  const instructions = offsetVector(
    builder,
    plan.instructions.map((instruction, i) =>
      writeInstruction(builder, instruction, `${what}.instructions[${i}]`),
    ),
  );
  builder.startObject(4);
  builder.addFieldOffset(0, inputs, 0);
  builder.addFieldOffset(1, outputs, 0);
  builder.addFieldOffset(2, instructions, 0);
  return builder.endObject();
}

/** schema/program.fbs: Instruction{instr_args: InstructionArguments}. */
function writeInstruction(
  builder: FlatbufferBuilder,
  instruction: InstructionDescription,
  what: string,
): number {
  // schema/program.fbs: KernelCall{op_index, args} and DelegateCall{delegate_index, args}.
  const args = indexVector(builder, instruction.args, `${what}.args`);
  const index = instruction.kind === 'kernelCall' ? instruction.opIndex : instruction.delegateIndex;
  builder.startObject(2);
  builder.addFieldInt32(0, i32(index, `${what} index`), 0);
  builder.addFieldOffset(1, args, 0);
  const body = builder.endObject();
  builder.startObject(2);
  builder.addFieldInt8(0, INSTRUCTION_ARGUMENTS[instruction.kind], 0);
  builder.addFieldOffset(1, body, 0);
  return builder.endObject();
}

/** schema/program.fbs: BackendDelegate fields id, processed, compile_specs. */
function writeDelegate(
  builder: FlatbufferBuilder,
  delegate: DelegateDescription,
  reference: DelegateReference,
): number {
  const id = builder.createString(delegate.id);
  // schema/program.fbs: BackendDelegateDataReference fields location (byte), index.
  builder.startObject(2);
  builder.addFieldInt8(0, reference.location, 0);
  builder.addFieldInt32(1, reference.index, 0);
  const processed = builder.endObject();
  const specs = offsetVector(
    builder,
    (delegate.compileSpecs ?? []).map((spec) => {
      // schema/program.fbs: CompileSpec fields key, value ([ubyte]).
      const key = builder.createString(spec.key);
      const value = byteVector(builder, spec.value);
      builder.startObject(2);
      builder.addFieldOffset(0, key, 0);
      builder.addFieldOffset(1, value, 0);
      return builder.endObject();
    }),
  );
  builder.startObject(3);
  builder.addFieldOffset(0, id, 0);
  builder.addFieldOffset(1, processed, 0);
  builder.addFieldOffset(2, specs, 0);
  return builder.endObject();
}

/** schema/program.fbs: EValue{val: KernelTypes}. */
function writeEValue(builder: FlatbufferBuilder, value: EValueDescription, what: string): number {
  let body: number;
  switch (value.kind) {
    case 'null':
      builder.startObject(0);
      body = builder.endObject();
      break;
    case 'int':
      builder.startObject(1);
      builder.addFieldInt64(0, i64(value.value, `${what}.value`), 0n);
      body = builder.endObject();
      break;
    case 'bool':
      builder.startObject(1);
      builder.addFieldInt8(0, value.value ? 1 : 0, 0);
      body = builder.endObject();
      break;
    case 'double':
      builder.startObject(1);
      builder.addFieldFloat64(0, value.value, 0);
      body = builder.endObject();
      break;
    case 'string': {
      const text = builder.createString(value.value);
      builder.startObject(1);
      builder.addFieldOffset(0, text, 0);
      body = builder.endObject();
      break;
    }
    case 'tensor':
      body = writeTensor(builder, value, what);
      break;
    default:
      return invalidArgument('an EValue kind', `${what}.kind`, (value as { kind: unknown }).kind);
  }
  builder.startObject(2);
  builder.addFieldInt8(0, KERNEL_TYPES[value.kind], 0);
  builder.addFieldOffset(1, body, 0);
  return builder.endObject();
}

function writeTensor(
  builder: FlatbufferBuilder,
  tensor: Extract<EValueDescription, { kind: 'tensor' }>,
  what: string,
): number {
  // schema/program.fbs: Tensor fields scalar_type (byte), storage_offset, sizes, dim_order
  // ([ubyte]), requires_grad, data_buffer_idx, allocation_info, layout, shape_dynamism,
  // extra_tensor_info.
  const sizes = uint32Vector(
    builder,
    tensor.sizes.map((size, i) => i32(size, `${what}.sizes[${i}]`)),
  );
  const dimOrder = byteVector(
    builder,
    Uint8Array.from(tensor.dimOrder, (dim, i) => uintUpTo(dim, 255, `${what}.dimOrder[${i}]`)),
  );
  let allocation = 0;
  if (tensor.allocation !== undefined) {
    // schema/program.fbs: AllocationDetails fields memory_id, memory_offset_low,
    // memory_offset_high (the offset's 32-bit halves).
    const offset = u64(tensor.allocation.offset, `${what}.allocation.offset`);
    builder.startObject(3);
    builder.addFieldInt32(0, u32(tensor.allocation.memoryId, `${what}.allocation.memoryId`), 0);
    builder.addFieldInt32(1, Number(offset & 0xffff_ffffn) | 0, 0);
    builder.addFieldInt32(2, Number(offset >> 32n) | 0, 0);
    allocation = builder.endObject();
  }
  builder.startObject(10);
  builder.addFieldInt8(0, uintUpTo(tensor.scalarType, 127, `${what}.scalarType`), 0);
  builder.addFieldOffset(2, sizes, 0);
  builder.addFieldOffset(3, dimOrder, 0);
  builder.addFieldInt32(5, u32(tensor.dataBufferIdx ?? 0, `${what}.dataBufferIdx`) | 0, 0);
  if (allocation !== 0) builder.addFieldOffset(6, allocation, 0);
  builder.addFieldInt8(8, uintUpTo(tensor.shapeDynamism ?? 0, 2, `${what}.shapeDynamism`), 0);
  return builder.endObject();
}

function indexVector(builder: FlatbufferBuilder, indices: readonly number[], what: string) {
  return uint32Vector(
    builder,
    indices.map((index, i) => i32(index, `${what}[${i}]`)),
  );
}
