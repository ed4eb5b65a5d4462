// The .pte program file: a Program flatbuffer (identifier ET12), an optional `eh00`
// extended header at byte 8, and data segments after the flatbuffer. Read in place: the
// file's bytes are the flatbuffer, nothing is copied or decoded ahead of use.
import { FlatBuffer, type Malformed, type Table, type Vector } from './flatbuffer.js';
import type { ByteRanges } from './mapped-bytes.js';
import { programInvalid } from './pte-errors.js';

/** runtime/executor/program.cpp: the runtime requires exactly this identifier. */
export const PTE_IDENTIFIER = 'ET12';
/** schema/extended_header.h: magic and the smallest header the runtime accepts. */
const EXTENDED_HEADER_MAGIC = 'eh00';
const EXTENDED_HEADER_MIN_LENGTH = 32;
const EXTENDED_HEADER_AT = 8;

/** Program.execution_plan[].chains[].instructions[].instr_args: schema/program.fbs union. */
export const INSTRUCTION_KERNEL_CALL = 1;
export const INSTRUCTION_DELEGATE_CALL = 2;
const INSTRUCTION_NAMES = [
  'NONE',
  'KernelCall',
  'DelegateCall',
  'MoveCall',
  'JumpFalseCall',
  'FreeCall',
];
/** EValue.val: schema/program.fbs KernelTypes; Tensor = 5. */
const KERNEL_TYPE_TENSOR = 5;
/** BackendDelegateDataReference.location: schema/program.fbs DataLocation. */
const LOCATION_INLINE = 0;
const LOCATION_SEGMENT = 1;

// Field slots of the tables read here, in schema/program.fbs order (a union takes two).
const PROGRAM = { executionPlan: 1, backendDelegateData: 3, segments: 4, namedData: 7 };
const PLAN = { name: 0, values: 2, inputs: 3, outputs: 4, chains: 5, operators: 6, delegates: 7 };
const CHAIN = { instructions: 2 };
const TENSOR = { scalarType: 0, sizes: 2 };

/** What a method's chain does, instruction by instruction. */
export type PteInstruction =
  | { readonly kind: 'delegate'; readonly delegate: number; readonly args: readonly number[] }
  | { readonly kind: 'kernel'; readonly operator: string; readonly args: readonly number[] }
  | { readonly kind: 'other'; readonly name: string };

export interface PteDelegate {
  /** The backend id, e.g. "XnnpackBackend". */
  readonly id: string;
  /** The processed payload, a view of the file. */
  readonly payload: Uint8Array;
  readonly compileSpecs: ReadonlyMap<string, Uint8Array>;
}

export interface PteTensorMeta {
  /** schema/scalar_type.fbs: FLOAT = 6. */
  readonly scalarType: number;
  readonly sizes: readonly number[];
}

/** One execution plan, read when first asked for. */
export interface PteMethod {
  readonly name: string;
  /** EValue indices of the method's inputs and outputs. */
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
  readonly instructions: readonly PteInstruction[];
  readonly delegates: readonly PteDelegate[];
  /** The tensor an EValue holds, or null when it holds something else. */
  tensor(value: number): PteTensorMeta | null;
}

/** Where a segment lies in the file. */
export interface FileRange {
  readonly start: number;
  readonly size: number;
}

/** The runtime reads this many bytes to look for the extended header (kNumHeadBytes). */
const HEAD_BYTES = 64;

export class PteFile {
  readonly path: string;
  readonly #file: ByteRanges;
  readonly #fb: FlatBuffer;
  readonly #program: Table;
  readonly #segmentBase: number;
  readonly #segments: Vector;
  readonly #malformed: Malformed;

  /** Reads the header and maps the Program flatbuffer; segments are mapped when read. */
  constructor(path: string, file: ByteRanges) {
    this.path = path;
    this.#file = file;
    this.#malformed = (what) => programInvalid(path, what);
    const head = new FlatBuffer(file.read(0, HEAD_BYTES), this.#malformed);
    if (head.length < 8 || head.identifier() !== PTE_IDENTIFIER) {
      this.#malformed(`expected the identifier ${PTE_IDENTIFIER} at bytes 4..8 of a .pte file`);
    }
    const { programSize, segmentBase } = readExtendedHeader(head, file.size, this.#malformed);
    this.#fb = new FlatBuffer(file.range(0, programSize), this.#malformed);
    this.#program = this.#fb.root('Program');
    this.#segmentBase = segmentBase;
    this.#segments = this.#fb.fieldVector(this.#program, PROGRAM.segments, 4, 'Program.segments');
  }

  /** The names of the execution plans, in file order. */
  methodNames(): string[] {
    const plans = this.#plans();
    const names: string[] = [];
    for (let i = 0; i < plans.length; i++) {
      const plan = this.#fb.tableAt(plans, i, 'ExecutionPlan');
      names.push(this.#fb.fieldString(plan, PLAN.name, 'ExecutionPlan.name') ?? '');
    }
    return names;
  }

  /** The plan named `name`, or undefined. */
  method(name: string): PteMethod | undefined {
    const plans = this.#plans();
    for (let i = 0; i < plans.length; i++) {
      const plan = this.#fb.tableAt(plans, i, 'ExecutionPlan');
      if (this.#fb.fieldString(plan, PLAN.name, 'ExecutionPlan.name') === name) {
        return this.#method(plan, name);
      }
    }
    return undefined;
  }

  /** The program's own named data: key → where its bytes lie (nothing is mapped). */
  namedData(): Map<string, FileRange> {
    const fb = this.#fb;
    const entries = fb.fieldVector(this.#program, PROGRAM.namedData, 4, 'Program.named_data');
    const data = new Map<string, FileRange>();
    for (let i = 0; i < entries.length; i++) {
      const entry = fb.tableAt(entries, i, 'NamedData');
      const key = fb.fieldString(entry, 0, 'NamedData.key') ?? '';
      data.set(key, this.segmentRange(fb.fieldU32(entry, 1), `Program.named_data[${i}]`));
    }
    return data;
  }

  /** Whether the program holds named data of its own. */
  hasNamedData(): boolean {
    return (
      this.#fb.fieldVector(this.#program, PROGRAM.namedData, 4, 'Program.named_data').length > 0
    );
  }

  /** Segment `index`, a view of the mapped file. */
  segment(index: number, what: string): Uint8Array {
    const { start, size } = this.segmentRange(index, what);
    return this.#file.range(start, size);
  }

  /** Where segment `index` lies; its bounds are checked against the file. */
  segmentRange(index: number, what: string): FileRange {
    const fb = this.#fb;
    if (index >= this.#segments.length) {
      this.#malformed(`${what}: segment ${index} of ${this.#segments.length}`);
    }
    const entry = fb.tableAt(this.#segments, index, 'DataSegment');
    const offset = fb.fieldU64(entry, 0, 'DataSegment.offset');
    const size = fb.fieldU64(entry, 1, 'DataSegment.size');
    const start = this.#segmentBase + offset;
    if (this.#segmentBase === 0 || !(start + size <= this.#file.size)) {
      this.#malformed(
        `${what}: segment ${index} (bytes ${start}..${start + size}) lies outside the file of ${this.#file.size} bytes`,
      );
    }
    return { start, size };
  }

  #plans(): Vector {
    return this.#fb.fieldVector(this.#program, PROGRAM.executionPlan, 4, 'Program.execution_plan');
  }

  #method(plan: Table, name: string): PteMethod {
    const fb = this.#fb;
    const values = fb.fieldVector(plan, PLAN.values, 4, 'ExecutionPlan.values');
    const inputs = fb.numbers(fb.fieldVector(plan, PLAN.inputs, 4, 'ExecutionPlan.inputs'), true);
    const outputs = fb.numbers(
      fb.fieldVector(plan, PLAN.outputs, 4, 'ExecutionPlan.outputs'),
      true,
    );
    for (const value of [...inputs, ...outputs]) this.#checkValue(value, values, name);
    const operators = fb.fieldVector(plan, PLAN.operators, 4, 'ExecutionPlan.operators');
    const instructions: PteInstruction[] = [];
    const chains = fb.fieldVector(plan, PLAN.chains, 4, 'ExecutionPlan.chains');
    for (let c = 0; c < chains.length; c++) {
      const chain = fb.tableAt(chains, c, 'Chain');
      const list = fb.fieldVector(chain, CHAIN.instructions, 4, 'Chain.instructions');
      for (let i = 0; i < list.length; i++) {
        instructions.push(
          this.#instruction(fb.tableAt(list, i, 'Instruction'), operators, values, name),
        );
      }
    }
    const delegateList = fb.fieldVector(plan, PLAN.delegates, 4, 'ExecutionPlan.delegates');
    const delegates: PteDelegate[] = [];
    for (let d = 0; d < delegateList.length; d++) {
      delegates.push(
        this.#delegate(fb.tableAt(delegateList, d, 'BackendDelegate'), `${name}.delegates[${d}]`),
      );
    }
    for (const instruction of instructions) {
      if (instruction.kind === 'delegate' && instruction.delegate >= delegates.length) {
        this.#malformed(
          `method "${name}": delegate ${instruction.delegate} of ${delegates.length}`,
        );
      }
    }
    return {
      name,
      inputs,
      outputs,
      instructions,
      delegates,
      tensor: (value) => this.#tensor(values, value, name),
    };
  }

  #checkValue(value: number, values: Vector, method: string): void {
    if (!(value >= 0 && value < values.length)) {
      this.#malformed(`method "${method}": value ${value} of ${values.length}`);
    }
  }

  #instruction(
    instruction: Table,
    operators: Vector,
    values: Vector,
    method: string,
  ): PteInstruction {
    const fb = this.#fb;
    const type = fb.fieldU8(instruction, 0);
    if (type !== INSTRUCTION_KERNEL_CALL && type !== INSTRUCTION_DELEGATE_CALL) {
      return { kind: 'other', name: INSTRUCTION_NAMES[type] ?? `instruction type ${type}` };
    }
    const call = fb.fieldTable(instruction, 1, 'Instruction.instr_args');
    if (call === null)
      return this.#malformed(`method "${method}": an instruction without arguments`);
    const index = fb.fieldI32(call, 0);
    const args = fb.numbers(fb.fieldVector(call, 1, 4, 'call args'), true);
    for (const arg of args) this.#checkValue(arg, values, method);
    if (type === INSTRUCTION_DELEGATE_CALL) return { kind: 'delegate', delegate: index, args };
    if (!(index >= 0 && index < operators.length)) {
      this.#malformed(`method "${method}": operator ${index} of ${operators.length}`);
    }
    const operator = fb.tableAt(operators, index, 'Operator');
    const opName = fb.fieldString(operator, 0, 'Operator.name') ?? '';
    const overload = fb.fieldString(operator, 1, 'Operator.overload') ?? '';
    return { kind: 'kernel', operator: overload === '' ? opName : `${opName}.${overload}`, args };
  }

  #delegate(delegate: Table, what: string): PteDelegate {
    const fb = this.#fb;
    const id = fb.fieldString(delegate, 0, 'BackendDelegate.id') ?? '';
    const processed = fb.fieldTable(delegate, 1, 'BackendDelegateDataReference');
    if (processed === null) return this.#malformed(`${what}: no processed data`);
    const location = fb.fieldU8(processed, 0);
    const index = fb.fieldU32(processed, 1);
    let payload: Uint8Array;
    if (location === LOCATION_SEGMENT) payload = this.segment(index, what);
    else if (location === LOCATION_INLINE) payload = this.#inlineData(index, what);
    else return this.#malformed(`${what}: data location ${location}`);
    const specs = fb.fieldVector(delegate, 2, 4, 'BackendDelegate.compile_specs');
    const compileSpecs = new Map<string, Uint8Array>();
    for (let i = 0; i < specs.length; i++) {
      const spec = fb.tableAt(specs, i, 'CompileSpec');
      const value = fb.fieldVector(spec, 1, 1, 'CompileSpec.value');
      compileSpecs.set(
        fb.fieldString(spec, 0, 'CompileSpec.key') ?? '',
        fb.bytes.subarray(value.start, value.start + value.length),
      );
    }
    return { id, payload, compileSpecs };
  }

  #inlineData(index: number, what: string): Uint8Array {
    const fb = this.#fb;
    const all = fb.fieldVector(
      this.#program,
      PROGRAM.backendDelegateData,
      4,
      'Program.backend_delegate_data',
    );
    if (index >= all.length) this.#malformed(`${what}: inline data ${index} of ${all.length}`);
    const data = fb.fieldVector(
      fb.tableAt(all, index, 'BackendDelegateInlineData'),
      0,
      1,
      'inline data',
    );
    return fb.bytes.subarray(data.start, data.start + data.length);
  }

  #tensor(values: Vector, value: number, method: string): PteTensorMeta | null {
    const fb = this.#fb;
    this.#checkValue(value, values, method);
    const evalue = fb.tableAt(values, value, 'EValue');
    if (fb.fieldU8(evalue, 0) !== KERNEL_TYPE_TENSOR) return null;
    const tensor = fb.fieldTable(evalue, 1, 'Tensor');
    if (tensor === null) return null;
    return {
      scalarType: fb.fieldU8(tensor, TENSOR.scalarType),
      sizes: fb.numbers(fb.fieldVector(tensor, TENSOR.sizes, 4, 'Tensor.sizes'), true),
    };
  }
}

/**
 * exir/_serialize/_program.py inserts the header at byte 8: magic, u32 length, then u64
 * program_size, segment_base_offset and segment_data_size. Without it the whole file is
 * the flatbuffer and there are no segments.
 */
function readExtendedHeader(
  whole: FlatBuffer,
  fileSize: number,
  malformed: Malformed,
): { programSize: number; segmentBase: number } {
  const bytes = whole.bytes;
  const none = { programSize: fileSize, segmentBase: 0 };
  if (bytes.byteLength < EXTENDED_HEADER_AT + 8) return none;
  const magic = String.fromCharCode(...bytes.subarray(EXTENDED_HEADER_AT, EXTENDED_HEADER_AT + 4));
  if (magic !== EXTENDED_HEADER_MAGIC) return none;
  const length = whole.u32(EXTENDED_HEADER_AT + 4);
  if (length < EXTENDED_HEADER_MIN_LENGTH) malformed(`eh00 header length ${length}`);
  const programSize = whole.u64(EXTENDED_HEADER_AT + 8, 'eh00 program_size');
  const segmentBase = whole.u64(EXTENDED_HEADER_AT + 16, 'eh00 segment_base_offset');
  const segmentDataSize = whole.u64(EXTENDED_HEADER_AT + 24, 'eh00 segment_data_size');
  if (!(programSize >= 16 && programSize <= fileSize)) {
    malformed(`eh00 program_size ${programSize} in a file of ${fileSize} bytes`);
  }
  // runtime/executor/program.cpp rejects segments that end past the file.
  if (!(segmentBase >= programSize && segmentBase + segmentDataSize <= fileSize)) {
    malformed(
      `eh00 segments (bytes ${segmentBase}..${segmentBase + segmentDataSize}) lie outside the file of ${fileSize} bytes`,
    );
  }
  return { programSize, segmentBase };
}
