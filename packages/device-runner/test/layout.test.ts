import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArgDirection,
  aicoreImageHash,
  buildChipCallable,
  buildCoreCallable,
  CoreCallableLayout,
  chipCallableLayout,
  contentHash,
  DeviceRunnerError,
  elfBuildId64,
  parseChipCallable,
  readCoreCallable,
} from '../src/index.js';
import { errorCode, makeCallable } from './support/callables.js';
import { fnvReference, le32, put } from './support/reference.js';

const goldenOrch = Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0xaa, 0xbb]);
const golden = () =>
  buildChipCallable({ orch: goldenOrch, funcName: 'orch_fn', configName: 'cfg_name' });

describe('ChipCallable layout (simpler callable.h)', () => {
  it.each([
    [256, [0, 1024, 1028, 1032, 1096, 1100, 5196, 9292, 9296, 9360, 9376]],
    [128, [0, 512, 516, 520, 584, 588, 4684, 8780, 8784, 8848, 8864]],
  ])('offsets for CHIP_MAX_TENSOR_ARGS=%i match the table', (n, offsets) => {
    const l = chipCallableLayout(n);
    expect([
      l.signature,
      l.sigCount,
      l.binarySize,
      l.funcName,
      l.funcNameLen,
      l.childFuncIds,
      l.childOffsets,
      l.childCount,
      l.configName,
      l.configNameLen,
      l.headerSize,
    ]).toEqual(offsets);
  });

  it('CoreCallable offsets: sig_count 128, binary_size 132, resolved_addr 136, header 144, binary 192', () => {
    expect(CoreCallableLayout).toMatchObject({
      sigCount: 128,
      binarySize: 132,
      resolvedAddr: 136,
      headerSize: 144,
      binaryOffset: 192,
    });
    const image = buildCoreCallable({ signature: [1, 2, 3], binary: Uint8Array.of(9, 8, 7) });
    expect(image.length).toBe(195);
    const view = new DataView(image.buffer);
    expect([view.getInt32(0, true), view.getInt32(4, true), view.getInt32(8, true)]).toEqual([
      1, 2, 3,
    ]);
    expect(view.getInt32(128, true)).toBe(3);
    expect(view.getUint32(132, true)).toBe(3);
    expect(view.getBigUint64(136, true)).toBe(0n);
    expect(image.subarray(144, 192).every((b) => b === 0)).toBe(true);
    expect([...image.subarray(192)]).toEqual([9, 8, 7]);
    expect(readCoreCallable(image)).toMatchObject({ binarySize: 3, imageSize: 195 });
  });

  // The expected images are written byte by byte from the documented layout (N = 256:
  // binary_size @1028, func_name @1032, func_name_len @1096, child_func_ids @1100,
  // child_offsets @5196, child_count @9292, config_name @9296, config_name_len @9360,
  // storage @9376; CoreCallable: signature @0, sig_count @128, binary_size @132, binary @192)
  // and hashed with the textbook FNV-1a, never with the builder or the package's hashes.
  it('golden callable without children: bytes, total_size, content_hash, aicore_image_hash, elf_build_id_64', () => {
    const expected = new Uint8Array(9382);
    put(expected, 1028, le32(6));
    put(expected, 1032, new TextEncoder().encode('orch_fn'));
    put(expected, 1096, le32(7));
    put(expected, 9296, new TextEncoder().encode('cfg_name'));
    put(expected, 9360, le32(8));
    put(expected, 9376, goldenOrch);

    const bytes = golden();
    expect(Buffer.from(bytes).equals(Buffer.from(expected))).toBe(true);
    const parsed = parseChipCallable(bytes);
    expect(parsed.totalSize).toBe(9382);
    expect(contentHash(bytes)).toBe(fnvReference(expected));
    // child_count (i32 0) alone.
    expect(aicoreImageHash(bytes, parsed)).toBe(fnvReference(Uint8Array.from(le32(0))));
    // Six bytes are shorter than an ELF64 header: FNV-1a of the input.
    expect(elfBuildId64(goldenOrch)).toBe(fnvReference(goldenOrch));
    expect(parsed.funcName).toBe('orch_fn');
    expect(parsed.configName).toBe('cfg_name');
  });

  it('golden callable with two children: placement, patch-free image and aicore_image_hash', () => {
    const orch = new Uint8Array(70).fill(0x11);
    const k1 = new Uint8Array(10).fill(2);
    const k2 = new Uint8Array(3).fill(3);
    // Storage: orch at 0; child 0 at align64(70) = 128; child 1 at align64(128 + 192 + 10) = 384.
    const expected = new Uint8Array(9376 + 384 + 192 + 3);
    put(expected, 1028, le32(70));
    put(expected, 1100, [...le32(5), ...le32(6)]);
    put(expected, 5196, [...le32(128), ...le32(384)]);
    put(expected, 9292, le32(2));
    put(expected, 9376, orch);
    put(expected, 9376 + 128 + 132, le32(10));
    put(expected, 9376 + 128 + 192, k1);
    put(expected, 9376 + 384, le32(ArgDirection.INOUT));
    put(expected, 9376 + 384 + 128, le32(1));
    put(expected, 9376 + 384 + 132, le32(3));
    put(expected, 9376 + 384 + 192, k2);

    const bytes = buildChipCallable({
      orch,
      children: [
        { funcId: 5, core: { binary: k1 } },
        { funcId: 6, core: { signature: [ArgDirection.INOUT], binary: k2 } },
      ],
    });
    expect(Buffer.from(bytes).equals(Buffer.from(expected))).toBe(true);
    const image = Uint8Array.from([
      ...le32(2),
      ...le32(5),
      ...le32(10),
      ...k1,
      ...le32(6),
      ...le32(3),
      ...k2,
    ]);
    expect(aicoreImageHash(bytes, parseChipCallable(bytes))).toBe(fnvReference(image));
    expect(contentHash(bytes)).toBe(fnvReference(expected));
  });

  it('aicore_image_hash ignores the orch and covers the kernels', () => {
    const kernel = { funcId: 3, core: { binary: Uint8Array.of(1, 2, 3) } };
    const a = buildChipCallable({ orch: Uint8Array.of(1), children: [kernel] });
    const b = buildChipCallable({ orch: Uint8Array.of(2, 2, 2, 2), children: [kernel] });
    const c = buildChipCallable({
      orch: Uint8Array.of(1),
      children: [{ funcId: 3, core: { binary: Uint8Array.of(1, 2, 4) } }],
    });
    const hash = (x: Uint8Array) => aicoreImageHash(x, parseChipCallable(x));
    expect(hash(a)).toBe(hash(b));
    expect(hash(a)).not.toBe(hash(c));
    expect(contentHash(a)).not.toBe(contentHash(b));
  });

  it('children start at 64-aligned storage offsets after the orch; image has no padding at the end', () => {
    const bytes = buildChipCallable({
      orch: new Uint8Array(70).fill(1),
      children: [
        { funcId: 5, core: { binary: new Uint8Array(10).fill(2) } },
        { funcId: 6, core: { signature: [ArgDirection.INOUT], binary: new Uint8Array(3).fill(3) } },
      ],
    });
    const parsed = parseChipCallable(bytes);
    expect(parsed.children.map((c) => c.storageOffset)).toEqual([128, 384]);
    expect(parsed.children.map((c) => c.funcId)).toEqual([5, 6]);
    expect(parsed.totalSize).toBe(9376 + 384 + 192 + 3);
    expect(bytes.length).toBe(parsed.totalSize);
    expect(parsed.children[1]?.signature).toEqual([3]);
  });

  it('names are truncated to 63 bytes and NUL-terminated', () => {
    const bytes = buildChipCallable({ orch: Uint8Array.of(1), funcName: 'f'.repeat(100) });
    const l = chipCallableLayout();
    expect(bytes[l.funcName + 62]).toBe(0x66);
    expect(bytes[l.funcName + 63]).toBe(0);
    expect(new DataView(bytes.buffer).getUint32(l.funcNameLen, true)).toBe(63);
    expect(parseChipCallable(bytes).funcName).toBe('f'.repeat(63));
  });

  it('builder rejects sig_count > max and child_count > 1024', () => {
    const orch = Uint8Array.of(1);
    expect(errorCode(() => buildChipCallable({ orch, signature: new Array(257).fill(1) }))).toBe(
      'ERR_SIG_COUNT_OUT_OF_RANGE',
    );
    expect(
      errorCode(() =>
        buildChipCallable({ orch, signature: new Array(129).fill(1) }, { maxTensorArgs: 128 }),
      ),
    ).toBe('ERR_SIG_COUNT_OUT_OF_RANGE');
    expect(buildChipCallable({ orch, signature: new Array(256).fill(1) }).length).toBe(9377);
    const child = { funcId: 0, core: { binary: new Uint8Array(0) } };
    expect(
      errorCode(() => buildChipCallable({ orch, children: new Array(1025).fill(child) })),
    ).toBe('ERR_CHILD_COUNT_OUT_OF_RANGE');
    expect(
      errorCode(() =>
        buildChipCallable({
          orch,
          children: [{ funcId: 0, core: { signature: new Array(33).fill(1), binary: orch } }],
        }),
      ),
    ).toBe('ERR_SIG_COUNT_OUT_OF_RANGE');
    expect(errorCode(() => buildChipCallable({ orch: 'x' as unknown as Uint8Array }))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
    expect(errorCode(() => chipCallableLayout(0))).toBe('ERR_INVALID_ARGUMENT');
  });

  it('N=128 callables round-trip and are rejected by an N=256 parser', () => {
    const bytes = makeCallable(3, { maxTensorArgs: 128 });
    const parsed = parseChipCallable(bytes, { maxTensorArgs: 128 });
    expect(parsed.headerSize).toBe(8864);
    expect(parsed.children).toHaveLength(2);
    expect(() => parseChipCallable(bytes)).toThrow(DeviceRunnerError);
  });
});

describe('parseChipCallable on untrusted bytes', () => {
  const l = chipCallableLayout();
  const base = () =>
    buildChipCallable({
      orch: new Uint8Array(100).fill(7),
      funcName: 'entry',
      children: [
        { funcId: 1, core: { binary: new Uint8Array(40).fill(1) } },
        { funcId: 2, core: { binary: new Uint8Array(40).fill(2) } },
      ],
    });
  const mutate = (fn: (v: DataView, b: Uint8Array) => void): Uint8Array => {
    const b = base();
    fn(new DataView(b.buffer), b);
    return b;
  };
  const cases: [string, () => Uint8Array, string][] = [
    ['short buffer', () => base().subarray(0, 100), 'ERR_BUFFER_TOO_SMALL'],
    ['trailing bytes', () => Uint8Array.from([...base(), 0]), 'ERR_SIZE_MISMATCH'],
    ['truncated tail', () => base().subarray(0, base().length - 1), 'ERR_CHILD_OUT_OF_RANGE'],
    [
      'negative sig_count',
      () => mutate((v) => v.setInt32(l.sigCount, -1, true)),
      'ERR_SIG_COUNT_OUT_OF_RANGE',
    ],
    [
      'sig_count > N',
      () => mutate((v) => v.setInt32(l.sigCount, 257, true)),
      'ERR_SIG_COUNT_OUT_OF_RANGE',
    ],
    [
      'bad direction',
      () =>
        mutate((v) => {
          v.setInt32(l.sigCount, 1, true);
          v.setInt32(0, 9, true);
        }),
      'ERR_BAD_SIGNATURE',
    ],
    [
      'child_count > 1024',
      () => mutate((v) => v.setInt32(l.childCount, 1025, true)),
      'ERR_CHILD_COUNT_OUT_OF_RANGE',
    ],
    [
      'negative child_count',
      () => mutate((v) => v.setInt32(l.childCount, -3, true)),
      'ERR_CHILD_COUNT_OUT_OF_RANGE',
    ],
    [
      'func_name without NUL',
      () => mutate((_, b) => b.fill(0x41, l.funcName, l.funcName + 64)),
      'ERR_NAME_NOT_TERMINATED',
    ],
    [
      'config_name without NUL',
      () => mutate((_, b) => b.fill(0x41, l.configName, l.configName + 64)),
      'ERR_NAME_NOT_TERMINATED',
    ],
    [
      'func_name_len wrong',
      () => mutate((v) => v.setUint32(l.funcNameLen, 64, true)),
      'ERR_NAME_LENGTH_MISMATCH',
    ],
    [
      'orch past the buffer',
      () => mutate((v) => v.setUint32(l.binarySize, 1_000_000, true)),
      'ERR_ORCH_OUT_OF_RANGE',
    ],
    [
      'child overlapping the orch',
      () => mutate((v) => v.setUint32(l.childOffsets, 64, true)),
      'ERR_CHILD_OVERLAPS_ORCH',
    ],
    [
      'orch grown over a child',
      () => mutate((v) => v.setUint32(l.binarySize, 200, true)),
      'ERR_CHILD_OVERLAPS_ORCH',
    ],
    [
      'child misaligned',
      () => mutate((v) => v.setUint32(l.childOffsets, 129, true)),
      'ERR_CHILD_MISALIGNED',
    ],
    [
      'child past the buffer',
      () => mutate((v) => v.setUint32(l.childOffsets + 4, 1 << 20, true)),
      'ERR_CHILD_OUT_OF_RANGE',
    ],
    [
      'child binary past the buffer',
      () => mutate((v) => v.setUint32(l.headerSize + 128 + 132, 0xffffffff, true)),
      'ERR_CHILD_OUT_OF_RANGE',
    ],
    [
      'children overlapping each other',
      () => mutate((v) => v.setUint32(l.childOffsets + 4, 128, true)),
      'ERR_CHILDREN_OVERLAP',
    ],
    [
      'child sig_count > 32',
      () => mutate((v) => v.setInt32(l.headerSize + 128 + 128, 33, true)),
      'ERR_SIG_COUNT_OUT_OF_RANGE',
    ],
  ];

  it.each(cases)('rejects %s', (_name, make, code) => {
    expect(errorCode(() => parseChipCallable(make()))).toBe(code);
  });

  it('rejects a non-Uint8Array with INVALID_ARGUMENT', () => {
    expect(errorCode(() => parseChipCallable([1, 2] as unknown as Uint8Array))).toBe(
      'ERR_INVALID_ARGUMENT',
    );
  });

  it('only DeviceRunnerError escapes on mutated callables (fuzz)', () => {
    const original = base();
    const interesting = [
      l.sigCount,
      l.binarySize,
      l.funcNameLen,
      l.childCount,
      l.childOffsets,
      l.childOffsets + 4,
      l.headerSize + 128 + 132,
    ];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            at: fc.oneof(fc.constantFrom(...interesting), fc.nat(original.length - 1)),
            value: fc.integer({ min: -1, max: 0x7fffffff }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.nat(original.length),
        (edits, cut) => {
          const bytes = original.slice(0, Math.max(cut, original.length - 64));
          const view = new DataView(bytes.buffer);
          for (const { at, value } of edits) {
            if (at + 4 <= bytes.length) view.setInt32(at, value, true);
          }
          try {
            const parsed = parseChipCallable(bytes);
            // Whatever is accepted is internally consistent.
            expect(parsed.totalSize).toBe(bytes.length);
            for (const child of parsed.children) {
              expect(child.storageOffset).toBeGreaterThanOrEqual(parsed.binarySize);
              expect(child.imageOffset + child.imageSize).toBeLessThanOrEqual(bytes.length);
            }
          } catch (error) {
            expect(error).toBeInstanceOf(DeviceRunnerError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('round-trips random specs byte-exactly', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.array(
          fc.record({
            funcId: fc.integer({ min: 0, max: 1023 }),
            binary: fc.uint8Array({ maxLength: 200 }),
            signature: fc.array(fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<ArgDirection>, {
              maxLength: 32,
            }),
          }),
          { maxLength: 6 },
        ),
        fc.string({ maxLength: 80 }),
        (orch, kids, funcName) => {
          const bytes = buildChipCallable({
            orch,
            funcName,
            children: kids.map((k) => ({
              funcId: k.funcId,
              core: { binary: k.binary, signature: k.signature },
            })),
          });
          const parsed = parseChipCallable(bytes);
          expect([...parsed.orch]).toEqual([...orch]);
          expect(parsed.children.map((c) => c.funcId)).toEqual(kids.map((k) => k.funcId));
          expect(parsed.children.map((c) => c.signature)).toEqual(kids.map((k) => k.signature));
          parsed.children.forEach((c, i) => {
            const start = c.imageOffset + 192;
            expect([...bytes.subarray(start, start + c.binarySize)]).toEqual([
              ...(kids[i]?.binary ?? []),
            ]);
            expect(c.storageOffset % 64).toBe(0);
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
