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

/**
 * Plans are shared: models repeat a handful of shapes over many layers, so creating 1024
 * operators of one shape derives (and validates) one plan, not 1024.
 */
const plans = new Map<number, FullyConnectedPlan[]>();
/** Bounds the table for programs with unusually many distinct shapes. */
const MAX_PLANS = 4096;
let planCount = 0;

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
  const bucketKey = (nc * 31 + kc) % 0x7fff_ffff;
  let bucket = plans.get(bucketKey);
  if (bucket !== undefined) {
    for (let i = 0; i < bucket.length; i++) {
      const plan = bucket[i] as FullyConnectedPlan;
      const l = plan.layout;
      if (
        l.outputChannels === nc &&
        l.inputChannels === kc &&
        l.nr === nr &&
        l.kr === kr &&
        l.sr === sr &&
        l.extraBytes === extraBytes &&
        l.operatorType === operatorType &&
        plan.gemm.padding === padding
      ) {
        return plan;
      }
    }
  }
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
  const plan: FullyConnectedPlan = { gemm, alignedSize, layout, seed, shapeKey };
  if (planCount >= MAX_PLANS) {
    plans.clear();
    planCount = 0;
  }
  if (bucket === undefined || !plans.has(bucketKey)) {
    bucket = [];
    plans.set(bucketKey, bucket);
  }
  bucket.push(plan);
  planCount++;
  return plan;
}
