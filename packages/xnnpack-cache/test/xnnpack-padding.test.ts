import { describe, expect, it } from 'vitest';
import {
  type CpuFeatures,
  createFullyConnectedNcF32,
  InMemoryNamedDataMap,
  packedSize,
  packF32GemmGoiW,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { EXECUTORCH_FMA3_PACKS } from './fixtures/executorch-fma3-packs.js';

const FMA3: CpuFeatures = {
  arch: 'x64',
  sse2: true,
  avx: true,
  fma3: true,
  avx512f: false,
  zen: false,
};
const floats = (base64: string) => {
  const bytes = Buffer.from(base64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

describe("padding rows as XNNPACK's packw ukernels write them", () => {
  it.each(EXECUTORCH_FMA3_PACKS)(
    'packs $outputChannels x $inputChannels byte for byte as ExecuTorch did on FMA3',
    ({ outputChannels, inputChannels, seed, weight, bias, packed }) => {
      const cache = new XNNWeightsCache({ cpuFeatures: FMA3 });
      cache.initializeForRuntime(
        new InMemoryNamedDataMap([
          tensorView('w', [outputChannels, inputChannels], floats(weight)),
          tensorView('b', [outputChannels], floats(bias)),
        ]),
      );
      const op = createFullyConnectedNcF32({
        cache,
        inputChannels,
        outputChannels,
        kernel: cache.loadUnpackedData('w'),
        bias: cache.loadUnpackedData('b'),
      });
      expect(op.seed).toBe(seed);
      expect(Buffer.from(cache.offsetToAddr(op.offset))).toEqual(Buffer.from(packed, 'base64'));
      cache.finalizeForRuntime();
    },
  );

  // One block of nr 4 holding 2 real rows (10, 11) of kc 6: the slots of padding rows 2, 3.
  const shape = { nc: 2, kc: 6, nr: 4, kr: 1, sr: 1 };
  const kernel = Float32Array.from({ length: 12 }, (_, i) => 10 + i);
  const padRows = (padding: 'zeros' | 'copy-last' | 'copy-last-u4') => {
    const out = new Uint8Array(packedSize(shape));
    packF32GemmGoiW({ ...shape, padding }, kernel, null, out);
    const packed = new Float32Array(out.buffer);
    const rows = [2, 3].map((o) => Array.from({ length: 6 }, (_, t) => packed[4 + t * 4 + o]));
    return rows;
  };
  const lastRow = [16, 17, 18, 19, 20, 21];

  it('leaves them zero (the reference packer), or copies the last real row', () => {
    expect(padRows('zeros')).toEqual([Array(6).fill(0), Array(6).fill(0)]);
    expect(padRows('copy-last')).toEqual([lastRow, lastRow]);
  });

  it('copy-last-u4: the final row only over the columns past the 4-column main loop', () => {
    expect(padRows('copy-last-u4')).toEqual([lastRow, [0, 0, 0, 0, 20, 21]]);
  });

  it('copies whole kr chunks, zero past kc (the sse2 4x2c4 ukernel)', () => {
    const c4 = { nc: 1, kc: 6, nr: 2, kr: 4, sr: 1, padding: 'copy-last' as const };
    const row = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const out = new Uint8Array(packedSize(c4));
    packF32GemmGoiW(c4, row, null, out);
    // Bias [0, 0], then per 4-column chunk row 0 and its copy.
    expect([...new Float32Array(out.buffer)]).toEqual([
      0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 0, 0, 5, 6, 0, 0,
    ]);
  });

  it("refuses a padding it doesn't know", () => {
    const out = new Uint8Array(packedSize(shape));
    expect(() =>
      packF32GemmGoiW({ ...shape, padding: 'ones' as 'zeros' }, kernel, null, out),
    ).toThrow(expect.objectContaining({ code: 'ERR_CACHE_INVALID_ARGUMENT' }));
  });
});
