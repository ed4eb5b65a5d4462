// AVX-512F: 8 rows × 2 vectors of 16, the tile of XNNPACK's 8x32 avx512f-broadcast kernel
// (src/f32-gemm/gen/f32-gemm-8x32-minmax-avx512f-broadcast.c): 16 accumulators of 32
// registers, and a batch of 64 is 8 whole tiles.
#include "gemm-x86.h"

#if MMAP_NATIVE_GEMM_X86
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

namespace mmap_native {

namespace {

#define KERNEL_TARGET __attribute__((target("avx512f")))

struct V {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr size_t kLanes = 16;
  static constexpr size_t kTileRows = kAvx512fTileRows;
  static constexpr size_t kTileVectors = 2;

  KERNEL_TARGET static inline Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  // Masked-off lanes are neither read nor faulted on.
  KERNEL_TARGET static inline Reg LoadMasked(const float* p, Mask mask) {
    return _mm512_maskz_loadu_ps(mask, p);
  }
  KERNEL_TARGET static inline Reg Broadcast(float f) { return _mm512_set1_ps(f); }
  KERNEL_TARGET static inline Reg Fma(Reg a, Reg b, Reg acc) {
    return _mm512_fmadd_ps(a, b, acc);
  }
  KERNEL_TARGET static inline Reg Add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static inline Mask TailMask(size_t lanes) { return static_cast<Mask>((1u << lanes) - 1); }
  // v >= min ? v : min (NaN → min), then v > max ? max : v: two compare-and-blends, so
  // equal values keep their own sign of zero.
  KERNEL_TARGET static inline Reg Clamp(Reg v, Reg min, Reg max) {
    const Reg low = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, min, _CMP_GE_OQ), min, v);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(low, max, _CMP_GT_OQ), low, max);
  }
  KERNEL_TARGET static inline void Store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  KERNEL_TARGET static inline void StorePartial(float* p, Reg v, size_t lanes) {
    _mm512_mask_storeu_ps(p, TailMask(lanes), v);
  }
};

#include "gemm-simd-tiles.inc"

}  // namespace

KERNEL_TARGET void GemmAvx512f(const GemmProblem& problem, size_t block_begin,
                               size_t block_end, size_t row_begin, size_t row_end) {
  GemmRange(problem, block_begin, block_end, row_begin, row_end);
}

#undef KERNEL_TARGET

}  // namespace mmap_native
#endif
