import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { encodeSafetensors, ModuleLoaderError, parseSafetensorsHeader } from '../src/index.js';

/** Builds a file from a raw header object, with `dataBytes` of data. */
function fileWithHeader(header: unknown, dataBytes: number, padTo = 8): Uint8Array {
  let json = typeof header === 'string' ? header : JSON.stringify(header);
  json += ' '.repeat((padTo - ((8 + Buffer.byteLength(json)) % padTo)) % padTo);
  const headerBytes = Buffer.from(json);
  const out = new Uint8Array(8 + headerBytes.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  return out;
}

function parse(bytes: Uint8Array) {
  return parseSafetensorsHeader(bytes, bytes.byteLength, 'model.safetensors');
}

function failure(bytes: Uint8Array): ModuleLoaderError {
  try {
    parse(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  }
  throw new Error('expected the header to be rejected');
}

const good = {
  w: { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] },
  b: { dtype: 'F32', shape: [2], data_offsets: [24, 32] },
};

describe('parseSafetensorsHeader', () => {
  test('reads tensors, offsets relative to the file, and metadata', () => {
    const header = parse(fileWithHeader({ __metadata__: { format: 'pt' }, ...good }, 32));
    expect(header.metadata).toEqual({ format: 'pt' });
    expect(
      header.tensors.map((t) => [
        t.name,
        t.dtype,
        t.shape,
        t.fileOffset - header.dataOffset,
        t.byteLength,
      ]),
    ).toEqual([
      ['w', 'F32', [2, 3], 0, 24],
      ['b', 'F32', [2], 24, 8],
    ]);
    expect(header.dataOffset % 8).toBe(0);
  });

  test('the writer produces files the reader accepts', () => {
    const bytes = encodeSafetensors([
      { name: 'a', shape: [1, 2], data: new Float32Array([1, 2]) },
      { name: 'z', shape: [3], data: new Float32Array([3, 4, 5]) },
    ]);
    const header = parse(bytes);
    const a = header.tensors.find((t) => t.name === 'a');
    expect(
      a && new Float32Array(bytes.slice(a.fileOffset, a.fileOffset + a.byteLength).buffer),
    ).toEqual(new Float32Array([1, 2]));
  });

  const rules: [string, () => Uint8Array, string][] = [
    ['a file shorter than the length prefix', () => new Uint8Array(5), ''],
    [
      'a header length over the cap',
      () => {
        const bytes = new Uint8Array(16);
        new DataView(bytes.buffer).setBigUint64(0, 2n ** 62n, true);
        return bytes;
      },
      'header_length',
    ],
    [
      'a header length past the end of the file',
      () => {
        const bytes = fileWithHeader(good, 32);
        new DataView(bytes.buffer).setBigUint64(0, BigInt(bytes.length), true);
        return bytes;
      },
      'header_length',
    ],
    [
      'invalid UTF-8 in the header',
      () => {
        const bytes = fileWithHeader('{"w":1}', 0);
        bytes[9] = 0xff;
        return bytes;
      },
      'header',
    ],
    ['a header that is not JSON', () => fileWithHeader('{"w": ', 0), 'header'],
    ['a header that is a JSON array', () => fileWithHeader('[1,2]', 0), 'header'],
    ['an unknown dtype', () => fileWithHeader({ w: { ...good.w, dtype: 'F31' } }, 24), 'w.dtype'],
    [
      'a negative dimension',
      () => fileWithHeader({ w: { ...good.w, shape: [-2, 3] } }, 24),
      'w.shape',
    ],
    [
      'a fractional dimension',
      () => fileWithHeader({ w: { ...good.w, shape: [2.5, 3] } }, 24),
      'w.shape',
    ],
    [
      'a rank above the limit',
      () => fileWithHeader({ w: { ...good.w, shape: new Array(17).fill(1) } }, 24),
      'w.shape',
    ],
    [
      'an element count past 2^53',
      () => fileWithHeader({ w: { ...good.w, shape: [2 ** 30, 2 ** 30, 2 ** 30] } }, 24),
      'w.shape',
    ],
    [
      'data_offsets that are not a pair',
      () => fileWithHeader({ w: { ...good.w, data_offsets: [0] } }, 24),
      'w.data_offsets',
    ],
    [
      'begin after end',
      () => fileWithHeader({ w: { ...good.w, data_offsets: [24, 0] } }, 24),
      'w.data_offsets',
    ],
    [
      'an end past the data region',
      () => fileWithHeader({ w: { ...good.w, data_offsets: [0, 48] } }, 24),
      'w.data_offsets',
    ],
    [
      'a size that disagrees with dtype x shape',
      () => fileWithHeader({ w: { ...good.w, shape: [2, 2] } }, 24),
      'w.data_offsets',
    ],
    [
      'overlapping tensors',
      () => fileWithHeader({ w: good.w, v: { ...good.w, data_offsets: [8, 32] } }, 32),
      'data_offsets',
    ],
    [
      'a hole between tensors',
      () => fileWithHeader({ w: good.w, b: { ...good.b, data_offsets: [28, 36] } }, 36),
      'b.data_offsets',
    ],
    ['bytes after the last tensor', () => fileWithHeader(good, 40), 'data'],
    [
      'non-string metadata',
      () => fileWithHeader({ __metadata__: { n: 1 }, ...good }, 32),
      '__metadata__.n',
    ],
    ['a tensor entry that is not an object', () => fileWithHeader({ w: 5 }, 0), 'w'],
  ];
  test.each(rules)('rejects %s', (_name, build, field) => {
    const error = failure(build());
    expect(error.code).toBe('ERR_SAFETENSORS_INVALID');
    expect(error.file).toBe('model.safetensors');
    if (field) expect(error.field).toContain(field);
  });

  test('fuzz: random bytes and mutations of a valid file only ever raise ModuleLoaderError', () => {
    const valid = encodeSafetensors([
      { name: 'layer.weight', shape: [4, 4], data: new Float32Array(16).fill(1) },
      { name: 'layer.bias', shape: [4], data: new Float32Array(4) },
    ]);
    const mutated = fc
      .tuple(
        fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), {
          maxLength: 8,
        }),
        fc.nat(valid.length),
      )
      .map(([edits, cut]) => {
        const bytes = valid.slice(0, cut);
        for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
        return bytes;
      });
    const inflated = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((length) => {
      const bytes = valid.slice();
      new DataView(bytes.buffer).setBigUint64(0, length, true);
      return bytes;
    });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 256 }), mutated, inflated), (bytes) => {
        try {
          parse(bytes);
        } catch (error) {
          if (!(error instanceof ModuleLoaderError)) throw error;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
