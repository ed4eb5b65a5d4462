import { PACKED_ALLOCATION_ALIGNMENT, roundUp } from '../alignment.js';
import type { PackedShapeKey } from '../cache/provider.js';
import { PACK_F32_GEMM_GOI_W_FINGERPRINT } from './fingerprint.js';
import { type GemmGoiLayout, type GemmPadding, gemmGoiLayout } from './gemm-goi.js';
import type { PackingLayout } from './packing-layout.js';
import { fullyConnectedSeedOf } from './seed.js';
import { seedAndSizeShared } from './seed-ambiguity.js';

/** Everything a fully-connected operator derives from its shape, tiling and operator type. */
export interface FullyConnectedPlan {
  readonly gemm: GemmGoiLayout;
  /** Packed bytes rounded up to the allocation alignment: what is reserved and inserted. */
  readonly alignedSize: number;
  /** The layout a cache hit must match. */
  readonly layout: PackingLayout;
  readonly seed: number;
  /** What a cache entry must match to serve this plan (seed, packer, layout, size). */
  readonly shapeKey: Required<PackedShapeKey>;
}

export function fullyConnectedPlan(
  nc: number,
  kc: number,
  nr: number,
  kr: number,
  sr: number,
  extraBytes: number,
  operatorType: number,
  padding: GemmPadding = 'zeros',
): FullyConnectedPlan {
  const gemm = gemmGoiLayout({ nc, kc, nr, kr, sr, extraBytes, padding });
  const alignedSize = roundUp(gemm.packedBytes, PACKED_ALLOCATION_ALIGNMENT);
  const layout = {
    operatorType,
    outputChannels: nc,
    inputChannels: kc,
    nr,
    kr,
    sr,
    extraBytes,
    flags: 0,
  };
  const seed = fullyConnectedSeedOf(nc, kc, nr, kr, sr, extraBytes, operatorType, false);
  // Frozen: a cache checks a shape key once while the same object comes back.
  const shapeKey: Required<PackedShapeKey> = Object.freeze({
    seed,
    fingerprint: PACK_F32_GEMM_GOI_W_FINGERPRINT,
    layout,
    packedSize: alignedSize,
    ambiguousWithoutLayout: seedAndSizeShared(
      nc,
      kc,
      nr,
      kr,
      sr,
      extraBytes,
      operatorType,
      alignedSize,
    ),
  });
  return { gemm, alignedSize, layout, seed, shapeKey };
}
