// Tiny XNNGraph flatbuffers laid out by hand for the reader's tests: each table is a list
// of fields by schema slot (backends/xnnpack/serialization/schema.fbs), written parent
// first so every uoffset points forward, each field in its own 4-byte slot.

export type Field =
  | { slot: number; u8: number }
  | { slot: number; u16: number }
  | { slot: number; u32: number }
  | { slot: number; f32: number }
  | { slot: number; table: TableFields }
  | { slot: number; tables: TableFields[] }
  | { slot: number; u32s: number[] }
  | { slot: number; text: Uint8Array };
export type TableFields = Field[];

export interface GraphBuffer {
  readonly bytes: Uint8Array;
  /** Where each table was placed, by the name given with `mark`. */
  readonly marks: Map<string, number>;
}

/** The flatbuffer of `root` with file identifier `identifier`. */
export function buildGraph(root: TableFields, identifier = 'XN01'): GraphBuffer {
  const bytes = new Uint8Array(1 << 16);
  const view = new DataView(bytes.buffer);
  const marks = new Map<string, number>();
  let end = 8;
  const alloc = (size: number, align: number): number => {
    end = Math.ceil(end / align) * align;
    const at = end;
    end += size;
    return at;
  };
  const vector = (count: number, size: number): number => {
    const at = alloc(4 + count * size, 4);
    view.setUint32(at, count, true);
    return at;
  };
  const placeTable = (fields: TableFields): number => {
    const slots = Math.max(-1, ...fields.map((field) => field.slot)) + 1;
    const vtable = alloc(4 + 2 * slots, 2);
    const at = alloc(4 + 4 * fields.length, 4);
    view.setInt32(at, at - vtable, true);
    view.setUint16(vtable, 4 + 2 * slots, true);
    view.setUint16(vtable + 2, 4 + 4 * fields.length, true);
    const mark = (fields as TableFields & { mark?: string }).mark;
    if (mark !== undefined) marks.set(mark, at);
    fields.forEach((field, k) => {
      const position = at + 4 + 4 * k;
      view.setUint16(vtable + 4 + 2 * field.slot, 4 + 4 * k, true);
      if ('u8' in field) view.setUint8(position, field.u8);
      else if ('u16' in field) view.setUint16(position, field.u16, true);
      else if ('u32' in field) view.setUint32(position, field.u32, true);
      else if ('f32' in field) view.setFloat32(position, field.f32, true);
      else view.setUint32(position, placeChild(field) - position, true);
    });
    return at;
  };
  const placeChild = (field: Field): number => {
    if ('table' in field) return placeTable(field.table);
    if ('u32s' in field) {
      const at = vector(field.u32s.length, 4);
      field.u32s.forEach((value, i) => {
        view.setUint32(at + 4 + 4 * i, value, true);
      });
      return at;
    }
    if ('text' in field) {
      const at = vector(field.text.length + 1, 1);
      bytes.set(field.text, at + 4);
      view.setUint32(at, field.text.length, true);
      return at;
    }
    if (!('tables' in field)) throw new Error(`slot ${field.slot}: not a reference`);
    const at = vector(field.tables.length, 4);
    field.tables.forEach((table, i) => {
      const element = at + 4 + 4 * i;
      view.setUint32(element, placeTable(table) - element, true);
    });
    return at;
  };
  bytes.set(new TextEncoder().encode(identifier), 4);
  view.setUint32(0, placeTable(root), true);
  return { bytes: bytes.slice(0, end), marks };
}

/** `fields` named, so buildGraph reports where it placed them. */
export function mark(name: string, fields: TableFields): TableFields {
  return Object.assign(fields, { mark: name });
}

/** An XValue holding an XNNTensorValue (datatype, dims, constant_buffer_idx, external_id, flags, id_out). */
export function tensorValue(
  id: number,
  dims: number[],
  more: { constant?: number; external?: number; flags?: number; quantized?: boolean } = {},
): TableFields {
  const tensor: TableFields = [
    { slot: 0, u16: 1 },
    { slot: 2, u32s: dims },
    { slot: 3, u32: more.constant ?? 0 },
    { slot: 4, u32: more.external ?? 0xffffffff },
    { slot: 5, u32: more.flags ?? 0 },
    { slot: 6, u32: id },
  ];
  // XNNQuantizedTensorValue: tensor_value first.
  const union = more.quantized === true ? [{ slot: 0, table: tensor }] : tensor;
  return [
    { slot: 0, u8: more.quantized === true ? 2 : 1 },
    { slot: 1, table: union },
  ];
}

/** An XNode: XNNFullyConnected (type 2) or a _XNNNode1x1 type, by value ids. */
export function node(type: number, ids: number[], minMax?: [number, number]): TableFields {
  const args: TableFields = ids.map((id, slot) => ({ slot, u32: id }));
  const fields: TableFields = [
    { slot: 0, u8: type },
    { slot: 1, table: args },
  ];
  if (minMax !== undefined) {
    fields.push({
      slot: 3,
      table: [
        { slot: 0, f32: minMax[0] },
        { slot: 1, f32: minMax[1] },
      ],
    });
  }
  return fields;
}

/** A ConstantDataOffset with only its named_key (slot 2): the reader reads nothing else. */
export function constant(key?: Uint8Array | string): TableFields {
  if (key === undefined) return [];
  const text = typeof key === 'string' ? new TextEncoder().encode(key) : key;
  return [{ slot: 2, text }];
}

/** An XNNGraph: xnodes (1), xvalues (2), input_ids (4), output_ids (5), constant_data (8). */
export function graph(parts: {
  nodes: TableFields[];
  values: TableFields[];
  inputs: number[];
  outputs: number[];
  constants: TableFields[];
}): TableFields {
  return [
    { slot: 1, tables: parts.nodes },
    { slot: 2, tables: parts.values },
    { slot: 4, u32s: parts.inputs },
    { slot: 5, u32s: parts.outputs },
    { slot: 8, tables: parts.constants },
  ];
}
