import { assertPositiveInteger, invalidArgument } from '../errors.js';
import type { GemmPadding } from '../packing/gemm-goi.js';

/** A GEMM ukernel's weight tiling: nr output channels per block, kr-wide chunks, sr shuffle. */
export interface GemmTiling {
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  /** What the packer writes in padding rows (default 'zeros'); never read, not in the seed. */
  readonly padding?: GemmPadding;
}

/** Tilings of common XNNPACK f32 GEMM ukernels. */
export const GEMM_TILINGS = Object.freeze({
  /** 1x8 / 4x8 SIMD kernels (the default on an unknown CPU). */
  nr8kr1sr1: Object.freeze({ nr: 8, kr: 1, sr: 1 }),
  /** 1x16 / 6x16 AVX and FMA3 kernels; arm64 Cortex-X4 and Oryon. */
  nr16kr1sr1: Object.freeze({ nr: 16, kr: 1, sr: 1 }),
  /** 1x32 / 7x32 AVX-512F kernels. */
  nr32kr1sr1: Object.freeze({ nr: 32, kr: 1, sr: 1 }),
  /** 4x16s4 FMA3 kernels of AMD Zen 1. */
  nr16kr1sr4: Object.freeze({ nr: 16, kr: 1, sr: 4 }),
  /** 4x2 kernels: the nr2 config on arm64. */
  nr2kr1sr1: Object.freeze({ nr: 2, kr: 1, sr: 1 }),
  /** 4x2c4 SSE kernels: the nr2 config on SSE2-only x86. */
  nr2kr4sr1: Object.freeze({ nr: 2, kr: 4, sr: 1 }),
  /** 4x4c2s2-style shuffled kernels. */
  nr4kr2sr2: Object.freeze({ nr: 4, kr: 2, sr: 2 }),
  /** 16-wide kernels with 4-element input chunks. */
  nr16kr4sr1: Object.freeze({ nr: 16, kr: 4, sr: 1 }),
  /** 8x8s4 shuffled kernels. */
  nr8kr1sr4: Object.freeze({ nr: 8, kr: 1, sr: 4 }),
} as const) satisfies Record<string, GemmTiling>;

/**
 * The tiling of a layer when the CPU is unknown (an operator otherwise gets the one
 * XNNPACK picks on the CPU: xnnpackGemmTiling).
 */
export const DEFAULT_GEMM_TILING: GemmTiling = GEMM_TILINGS.nr8kr1sr1;

export function assertTiling(tiling: GemmTiling): void {
  if (tiling === null || typeof tiling !== 'object') {
    invalidArgument('{ nr, kr, sr }', 'tiling', tiling);
  }
  assertPositiveInteger(tiling.nr, 'tiling.nr');
  assertPositiveInteger(tiling.kr, 'tiling.kr');
  assertPositiveInteger(tiling.sr, 'tiling.sr');
  const { padding } = tiling;
  if (
    padding !== undefined &&
    padding !== 'zeros' &&
    padding !== 'copy-last' &&
    padding !== 'copy-last-u4'
  ) {
    invalidArgument("'zeros', 'copy-last' or 'copy-last-u4'", 'tiling.padding', padding);
  }
}
