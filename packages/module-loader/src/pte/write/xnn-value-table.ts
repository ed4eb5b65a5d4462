import { sha256Hex } from '../../safetensors/digest.js';
import { f32LittleEndianBytes } from './f32-bytes.js';
import type { NamedDataEntry } from './pte-description.js';
import {
  XNN_DATATYPE_FP32,
  XNN_NAMED_CONSTANT_OFFSET,
  XNN_VALUE_FLAG_EXTERNAL_INPUT,
  XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
  type XnnConstantDataDescription,
  type XnnTensorValueDescription,
} from './xnn-graph-description.js';

/**
 * The values of one XNNPACK graph as backends/xnnpack/operators/node_visitor.py defines
 * them: id_out is the definition order, external values carry their DelegateCall arg
 * index, constants are named data keyed by the hex SHA-256 of their bytes.
 */
export class XnnValueTable {
  readonly values: XnnTensorValueDescription[] = [];
  readonly inputIds: number[] = [];
  readonly outputIds: number[] = [];
  /** operators/node_visitor.py: entry 0 is ConstantDataOffset(0, 0) (named_key ""). */
  readonly constantData: XnnConstantDataDescription[] = [{ offset: 0, size: 0, namedKey: '' }];
  readonly constants: NamedDataEntry[] = [];
  readonly #ids = new Map<string, number>();
  readonly #widths = new Map<string, number>();
  readonly #constantIds = new Map<string, number>();

  constructor(private readonly inputCount: number) {}

  id(name: string): number | undefined {
    return this.#ids.get(name);
  }

  features(name: string): number | undefined {
    return this.#widths.get(name);
  }

  /** A [batch, width] f32 activation; external when `externalId` is given (inputs first). */
  defineActivation(name: string, dims: readonly number[], externalId?: number): number {
    const idOut = this.values.length;
    const value: XnnTensorValueDescription = { datatype: XNN_DATATYPE_FP32, dims, idOut };
    if (externalId !== undefined) {
      const isInput = externalId < this.inputCount;
      value.externalId = externalId;
      value.flags = isInput ? XNN_VALUE_FLAG_EXTERNAL_INPUT : XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
      // node_visitor.py gen_ids_and_flags: input_ids / output_ids list id_out on definition.
      (isInput ? this.inputIds : this.outputIds).push(idOut);
    }
    this.values.push(value);
    this.#ids.set(name, idOut);
    this.#widths.set(name, dims[dims.length - 1] as number);
    return idOut;
  }

  /** The value of weight tensor `name` (one value however many nodes name it). */
  defineConstant(name: string, dims: readonly number[], data: Float32Array): number {
    const known = this.#constantIds.get(name);
    if (known !== undefined) return known;
    const bytes = f32LittleEndianBytes(data);
    // operators/node_visitor.py: named_key = hashlib.sha256(bytes).hexdigest().
    const namedKey = sha256Hex(bytes);
    this.constants.push({ key: namedKey, bytes });
    const idOut = this.values.length;
    this.values.push({
      datatype: XNN_DATATYPE_FP32,
      dims,
      constantBufferIdx: this.constantData.length,
      idOut,
    });
    this.constantData.push({ offset: XNN_NAMED_CONSTANT_OFFSET, size: bytes.length, namedKey });
    this.#constantIds.set(name, idOut);
    return idOut;
  }
}
