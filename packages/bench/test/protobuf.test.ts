import { describe, expect, it } from 'vitest';
import { bytesField, intField, messageField, stringField } from '../src/onnx/protobuf.js';

const bytes = (field: Uint8Array) => Array.from(field);

describe('the protocol-buffers writer', () => {
  it('writes varint fields as the wire format specifies (key = field << 3 | wire type)', () => {
    expect(bytes(intField(1, 0))).toEqual([0x08, 0x00]);
    expect(bytes(intField(1, 150))).toEqual([0x08, 0x96, 0x01]);
    expect(bytes(intField(20, 2))).toEqual([0xa0, 0x01, 0x02]);
  });

  it('writes values past 2^31 (external data offsets of large models) without wrapping', () => {
    // 2^35 = 0x8_0000_0000: five 7-bit groups of zeros, then 0b10 0000.
    expect(bytes(intField(1, 2 ** 35))).toEqual([0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    expect(() => intField(1, -1)).toThrow(RangeError);
    expect(() => intField(1, 2 ** 53)).toThrow(RangeError);
  });

  it('writes strings, bytes and nested messages length-delimited', () => {
    expect(bytes(stringField(2, 'ab'))).toEqual([0x12, 0x02, 0x61, 0x62]);
    expect(bytes(bytesField(9, new Uint8Array(200)).subarray(0, 3))).toEqual([0x4a, 0xc8, 0x01]);
    expect(bytes(messageField(3, [intField(1, 1), stringField(2, 'x')]))).toEqual([
      0x1a, 0x05, 0x08, 0x01, 0x12, 0x01, 0x78,
    ]);
  });
});
