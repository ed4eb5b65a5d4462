import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fullyConnectedSeed,
  gemmGoiLayout,
  OPERATOR_TYPE_FULLY_CONNECTED_NC_F32,
  packedSize,
  packF32GemmGoiW,
  packingStats,
  resetPackingStats,
  WeightsCacheError,
} from '../src/index.js';
import { randomFloats, referencePackGoi } from './reference.js';

function packToFloats(
  shape: Parameters<typeof packF32GemmGoiW>[0],
  kernel: Float32Array,
  bias: Float32Array | null,
): Float32Array {
  const bytes = new Uint8Array(packedSize(shape));
  packF32GemmGoiW(shape, kernel, bias, bytes);
  return new Float32Array(bytes.buffer);
}

describe('packF32GemmGoiW', () => {
  it('packs a worked example by hand (nc=3, kc=5, nr=2, kr=2, sr=2)', () => {
    // w_o[i] = 10·(o+1) + i, b_o = -(o+1): every value is distinct.
    const kernel = new Float32Array([10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34]);
    const bias = new Float32Array([-1, -2, -3]);
    const shape = { nc: 3, kc: 5, nr: 2, kr: 2, sr: 2 };
    expect(packedSize(shape)).toBe(36 * 4);
    expect(gemmGoiLayout(shape).paddedKc).toBe(8);
    const packed = packToFloats(shape, kernel, bias);
    // biases | w0[0,1] w1[2,3] | w0[2,3] w1[0,1] | w0[4],0 0,0 | 0,0 w1[4],0
    const block0 = [-1, -2, 10, 11, 22, 23, 12, 13, 20, 21, 14, 0, 0, 0, 0, 0, 24, 0];
    // Block 1 holds one real row (w2); the row-1 slots stay zero.
    const block1 = [-3, 0, 30, 31, 0, 0, 32, 33, 0, 0, 34, 0, 0, 0, 0, 0, 0, 0];
    expect([...packed]).toEqual([...block0, ...block1]);
  });

  it('writes zeros in the bias slots only by leaving the zero-filled buffer alone', () => {
    const shape = { nc: 2, kc: 1, nr: 2, kr: 1, sr: 1 };
    const bytes = new Uint8Array(packedSize(shape));
    new Float32Array(bytes.buffer).fill(7);
    packF32GemmGoiW(shape, new Float32Array([1, 2]), null, bytes);
    // No bias: slots 0..1 are skipped, not zeroed (XNNPACK relies on the zero-fill).
    expect([...new Float32Array(bytes.buffer)]).toEqual([7, 7, 1, 2]);
  });

  it('matches the transcribed loop on the eight-row fast path (kr = sr = 1, nr 8 or 16)', () => {
    fc.assert(
      fc.property(
        fc.record({
          g: fc.integer({ min: 1, max: 2 }),
          nc: fc.integer({ min: 1, max: 40 }),
          kc: fc.integer({ min: 0, max: 40 }),
          nr: fc.constantFrom(8, 16),
          withBias: fc.boolean(),
          seed: fc.integer({ min: 1, max: 1e9 }),
        }),
        ({ g, nc, kc, nr, withBias, seed }) => {
          const kernel = randomFloats(g * nc * kc, seed);
          const bias = withBias ? randomFloats(g * nc, seed + 1) : null;
          const shape = { groups: g, nc, kc, nr, kr: 1, sr: 1 };
          const expected = referencePackGoi(g, nc, kc, nr, 1, 1, kernel, bias, 0);
          expect(packToFloats(shape, kernel, bias)).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('matches the transcribed XNNPACK loop for any g, nc, kc, nr, kr, sr, bias, extra bytes', () => {
    fc.assert(
      fc.property(
        fc.record({
          g: fc.integer({ min: 1, max: 3 }),
          nc: fc.integer({ min: 1, max: 20 }),
          kc: fc.integer({ min: 0, max: 40 }),
          nr: fc.integer({ min: 1, max: 17 }),
          log2skr: fc.integer({ min: 0, max: 5 }),
          log2sr: fc.integer({ min: 0, max: 5 }),
          withBias: fc.boolean(),
          extraFloats: fc.integer({ min: 0, max: 3 }),
          seed: fc.integer({ min: 1, max: 1e9 }),
        }),
        ({ g, nc, kc, nr, log2skr, log2sr, withBias, extraFloats, seed }) => {
          const sr = 2 ** Math.min(log2sr, log2skr);
          const kr = 2 ** log2skr / sr;
          fc.pre(nr >= sr);
          const kernel = randomFloats(g * nc * kc, seed);
          const bias = withBias ? randomFloats(g * nc, seed + 1) : null;
          const shape = { groups: g, nc, kc, nr, kr, sr, extraBytes: extraFloats * 4 };
          const expected = referencePackGoi(g, nc, kc, nr, kr, sr, kernel, bias, extraFloats);
          expect(packToFloats(shape, kernel, bias)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('handles extra bytes that are not a multiple of 4 (byte-shifted blocks)', () => {
    const shape = { groups: 2, nc: 3, kc: 5, nr: 2, kr: 2, sr: 2, extraBytes: 3 };
    const kernel = randomFloats(2 * 3 * 5, 11);
    const bias = randomFloats(6, 12);
    const bytes = new Uint8Array(packedSize(shape));
    packF32GemmGoiW(shape, kernel, bias, bytes);
    const view = new DataView(bytes.buffer);
    const layout = gemmGoiLayout(shape);
    // Each block equals the 4-byte-aligned packing of the same block, shifted by 3·block bytes.
    const aligned = referencePackGoi(2, 3, 5, 2, 2, 2, kernel, bias, 0);
    const blockFloats = (layout.blockBytes - 3) / 4;
    for (let block = 0; block < 4; block++) {
      for (let i = 0; i < blockFloats; i++) {
        const got = view.getFloat32(block * layout.blockBytes + i * 4, true);
        expect(got).toBe(aligned[block * blockFloats + i]);
      }
    }
  });

  it('packs layers side by side in shared buffers, alternating, as into buffers of their own', () => {
    // Heap slabs and staging buffers hold many layers: each pack starts at its region's
    // offset and writes nothing outside it, whichever buffer the previous pack used.
    const shapes = [
      { nc: 16, kc: 8, nr: 8, kr: 1, sr: 1 },
      { nc: 9, kc: 5, nr: 8, kr: 1, sr: 1 },
      { nc: 12, kc: 7, nr: 4, kr: 2, sr: 2 },
      { nc: 8, kc: 3, nr: 8, kr: 1, sr: 1 },
    ];
    const slabs = [new Uint8Array(4096).fill(0xee), new Uint8Array(4096).fill(0xee)];
    const cursors = [64, 64];
    const placed: Array<{ slab: number; at: number; expected: Float32Array }> = [];
    shapes.forEach((shape, i) => {
      const kernel = randomFloats(shape.nc * shape.kc, 40 + i);
      const bias = randomFloats(shape.nc, 50 + i);
      const size = packedSize(shape);
      const slab = i % 2;
      const at = cursors[slab] as number;
      const region = (slabs[slab] as Uint8Array).subarray(at, at + size);
      region.fill(0);
      packF32GemmGoiW(shape, kernel, bias, region);
      cursors[slab] = at + size + 64;
      placed.push({ slab, at, expected: packToFloats(shape, kernel, bias) });
    });
    for (const { slab, at, expected } of placed) {
      const bytes = slabs[slab] as Uint8Array;
      expect(new Float32Array(bytes.slice(at, at + expected.byteLength).buffer)).toEqual(expected);
      // The gap before each region is untouched.
      expect(Array.from(bytes.subarray(at - 64, at))).toEqual(new Array(64).fill(0xee));
    }
  });

  it('rejects sr·kr that is not a power of two and nr < sr', () => {
    const kernel = new Float32Array(6);
    const out = new Uint8Array(1024);
    const bad = [
      { nc: 2, kc: 3, nr: 4, kr: 3, sr: 1 },
      { nc: 2, kc: 3, nr: 1, kr: 1, sr: 2 },
      { nc: 2, kc: 3, nr: 0, kr: 1, sr: 1 },
    ];
    for (const shape of bad) {
      expect(() => packF32GemmGoiW(shape, kernel, null, out)).toThrowError(
        expect.objectContaining({ code: 'ERR_CACHE_INVALID_ARGUMENT' }),
      );
    }
  });

  it('rejects an output buffer smaller than packedSize', () => {
    const shape = { nc: 3, kc: 5, nr: 2, kr: 2, sr: 2 };
    const call = () =>
      packF32GemmGoiW(shape, new Float32Array(15), null, new Uint8Array(packedSize(shape) - 1));
    expect(call).toThrow(WeightsCacheError);
  });

  it('counts packing calls and bytes', () => {
    resetPackingStats();
    const shape = { nc: 3, kc: 5, nr: 2, kr: 2, sr: 2 };
    packToFloats(shape, new Float32Array(15), null);
    packToFloats(shape, new Float32Array(15), null);
    expect(packingStats()).toEqual({ calls: 2, bytes: 2 * 144 });
    resetPackingStats();
    expect(packingStats()).toEqual({ calls: 0, bytes: 0 });
  });
});

describe('fullyConnectedSeed', () => {
  it('XORs shape, tiling, extra bytes and operator type as a u32', () => {
    const input = { outputChannels: 1024, inputChannels: 768, nr: 8, kr: 1, sr: 1 };
    const expected = (1024 ^ 768 ^ 8 ^ 1 ^ 1 ^ 0 ^ OPERATOR_TYPE_FULLY_CONNECTED_NC_F32) >>> 0;
    expect(fullyConnectedSeed(input)).toBe(expected);
    expect(fullyConnectedSeed({ ...input, extraBytes: 16, operatorType: 3 })).toBe(
      (1024 ^ 768 ^ 8 ^ 1 ^ 1 ^ 16 ^ 3) >>> 0,
    );
  });

  it('inverts every bit for transposed weights, staying unsigned', () => {
    const input = { outputChannels: 4, inputChannels: 4, nr: 4, kr: 1, sr: 1 };
    const plain = fullyConnectedSeed(input);
    const transposed = fullyConnectedSeed({ ...input, transposed: true });
    expect(transposed).toBe(~plain >>> 0);
    expect(transposed).toBeGreaterThan(0x7fff_ffff);
  });

  it('changes when the tiling changes', () => {
    const base = { outputChannels: 64, inputChannels: 64, nr: 8, kr: 1, sr: 1 };
    expect(fullyConnectedSeed({ ...base, nr: 16 })).not.toBe(fullyConnectedSeed(base));
  });
});
