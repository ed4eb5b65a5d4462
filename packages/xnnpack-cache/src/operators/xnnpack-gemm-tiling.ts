import type { GemmPadding } from '../packing/gemm-goi.js';
import type { CpuFeatures } from './cpu-features.js';
import { DEFAULT_GEMM_TILING, GEMM_TILINGS, type GemmTiling } from './tiling.js';

const withPadding = (tiling: GemmTiling, padding: GemmPadding): GemmTiling =>
  Object.freeze({ ...tiling, padding });

/**
 * The tilings of the x86 ukernels, with the padding rows their packw ukernel writes
 * (XNNPACK 92a7ad50 src/x32-packw/gen/x32-packw-x*-gemm-goi-{avx,avx512f,sse2}-u4*.c).
 * Zen 1's x16s4 and the arm64 neon packw ukernels pad otherwise (arm64 keeps stale
 * register lanes): those tilings pad with zeros, bytes nothing reads.
 */
const X86 = Object.freeze({
  avx512nr32: withPadding(GEMM_TILINGS.nr32kr1sr1, 'copy-last-u4'),
  avx512nr16: withPadding(GEMM_TILINGS.nr16kr1sr1, 'copy-last-u4'),
  avxNr16: withPadding(GEMM_TILINGS.nr16kr1sr1, 'copy-last-u4'),
  avxNr8: withPadding(GEMM_TILINGS.nr8kr1sr1, 'copy-last-u4'),
  sse2Nr8: withPadding(GEMM_TILINGS.nr8kr1sr1, 'copy-last'),
  sse2Nr2: withPadding(GEMM_TILINGS.nr2kr4sr1, 'copy-last'),
});

/** The two f32 GEMM configs a fully-connected operator chooses between. */
export interface XnnpackGemmConfigs {
  /** xnn_init_f32_gemm_config. */
  readonly default: GemmTiling;
  /** xnn_init_f32_gemm_nr2_config: for layers the default's nr fits badly. */
  readonly nr2: GemmTiling;
}

/**
 * The tilings of XNNPACK 92a7ad50's f32 GEMM configs on this CPU; null: unknown CPU.
 * Both configs ignore XNN_FLAG_SLOW_CONSISTENT_ARITHMETIC there (the only branch that
 * reads it, AVX-512 c2 kernels, is compiled out with `#if false`).
 */
export function xnnpackGemmConfigs(features: CpuFeatures | null): XnnpackGemmConfigs | null {
  if (features === null) return null;
  // XNNPACK 92a7ad50 src/configs/gemm-config.c init_f32_gemm_config_impl, init_f32_gemm_nr2_config_impl
  if (features.arch === 'arm64') {
    // arm64 (assembly, not Apple): 1x8/7x8 kernels, except these cores' big-core choices.
    const byCore = {
      'cortex-x4': GEMM_TILINGS.nr16kr1sr1,
      oryon: GEMM_TILINGS.nr16kr1sr1,
      'exynos-m1': GEMM_TILINGS.nr8kr1sr4,
      'exynos-m2': GEMM_TILINGS.nr8kr1sr4,
      other: GEMM_TILINGS.nr8kr1sr1,
    };
    // nr2: 4x2 kernels on every arm64 CPU.
    return { default: byCore[features.core], nr2: GEMM_TILINGS.nr2kr1sr1 };
  }
  // x86-64: the first family the CPU (and build) has, AVX-512F, FMA3, AVX, SSE2.
  if (features.avx512f) return { default: X86.avx512nr32, nr2: X86.avx512nr16 };
  if (features.fma3) {
    // Zen 1 takes the 4x16s4 kernels; its nr2 is 4x8, the others' 10x8: both nr 8.
    return { default: features.zen ? GEMM_TILINGS.nr16kr1sr4 : X86.avxNr16, nr2: X86.avxNr8 };
  }
  if (features.avx) return { default: X86.avxNr16, nr2: X86.avxNr8 };
  // SSE2: 4x8 kernels, and 4x2c4 for nr2.
  if (features.sse2) return { default: X86.sse2Nr8, nr2: X86.sse2Nr2 };
  return null;
}

/**
 * Whether XNNPACK takes the nr2 config for a layer of `outputChannels`: the default's nr
 * is wider than the layer, or nr2 wastes fewer columns and the default over 1%.
 */
export function xnnUseNr2(nr: number, nr2: number, outputChannels: number): boolean {
  // XNNPACK 92a7ad50 src/microkernel-utils.c xnn_use_nr2
  const overcompute = (nr - (outputChannels % nr)) % nr;
  const nr2Overcompute = (nr2 - (outputChannels % nr2)) % nr2;
  return (
    nr > outputChannels || (nr2Overcompute < overcompute && overcompute * 100 > outputChannels)
  );
}

/**
 * The tiling XNNPACK 92a7ad50 packs an f32 fully-connected layer of `outputChannels` with
 * on a CPU with these features (src/operators/fully-connected-nc.c); nr8kr1sr1 when the
 * CPU is unknown.
 */
export function xnnpackGemmTiling(
  features: CpuFeatures | null,
  outputChannels: number,
): GemmTiling {
  return tilingFor(xnnpackGemmConfigs(features), outputChannels);
}

/** xnnpackGemmTiling from configs already worked out (a cache keeps them). */
export function tilingFor(configs: XnnpackGemmConfigs | null, outputChannels: number): GemmTiling {
  if (configs === null) return DEFAULT_GEMM_TILING;
  return xnnUseNr2(configs.default.nr, configs.nr2.nr, outputChannels)
    ? configs.nr2
    : configs.default;
}
