// The protocol-buffers wire format, as far as the ONNX messages written here need it:
// varint fields (wire type 0) and length-delimited fields (wire type 2) holding bytes,
// strings or nested messages. Messages are built as arrays of encoded fields.

const VARINT = 0;
const LENGTH_DELIMITED = 2;
const encoder = new TextEncoder();

/** A non-negative integer as a base-128 varint (arithmetic, not bitwise: values past 2^31). */
function varint(value: number): number[] {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`Expected a non-negative safe integer but received ${value}`);
  }
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

function key(field: number, wireType: number): number[] {
  return varint(field * 8 + wireType);
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** An int32/int64/enum field (non-negative values only). */
export function intField(field: number, value: number): Uint8Array {
  return Uint8Array.from([...key(field, VARINT), ...varint(value)]);
}

export function bytesField(field: number, bytes: Uint8Array): Uint8Array {
  return concatBytes([
    Uint8Array.from([...key(field, LENGTH_DELIMITED), ...varint(bytes.byteLength)]),
    bytes,
  ]);
}

export function stringField(field: number, text: string): Uint8Array {
  return bytesField(field, encoder.encode(text));
}

/** A nested message made of already encoded fields. */
export function messageField(field: number, fields: readonly Uint8Array[]): Uint8Array {
  return bytesField(field, concatBytes(fields));
}
