// AVX2 + FMA3: 6 rows × 2 vectors of 8, the tile of XNNPACK's 6x16 fma3-broadcast kernels.
#include "gemm-x86.h"

#if MMAP_NATIVE_GEMM_X86
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace mmap_native {

namespace {

#define KERNEL_TARGET __attribute__((target("avx2,fma")))

// Eight all-ones lanes then eight zero lanes: the mask of n lanes starts at 8 - n.
alignas(64) constexpr int32_t kLaneMasks[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};

struct V {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr size_t kLanes = 8;
  static constexpr size_t kTileRows = kAvx2FmaTileRows;
  static constexpr size_t kTileVectors = 2;

  KERNEL_TARGET static inline Reg Load(const float* p) { return _mm256_loadu_ps(p); }
  // Masked-off lanes are neither read nor faulted on.
  KERNEL_TARGET static inline Reg LoadMasked(const float* p, Mask mask) {
    return _mm256_maskload_ps(p, mask);
  }
  KERNEL_TARGET static inline Reg Broadcast(float f) { return _mm256_set1_ps(f); }
  KERNEL_TARGET static inline Reg Fma(Reg a, Reg b, Reg acc) {
    return _mm256_fmadd_ps(a, b, acc);
  }
  KERNEL_TARGET static inline Reg Add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  KERNEL_TARGET static inline Mask TailMask(size_t lanes) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneMasks + kLanes - lanes));
  }
  // v >= min ? v : min (NaN → min), then max < v ? max : v (see gemm-x86-sse2.cc).
  KERNEL_TARGET static inline Reg Clamp(Reg v, Reg min, Reg max) {
    const Reg keep = _mm256_cmp_ps(v, min, _CMP_GE_OQ);
    return _mm256_min_ps(max, _mm256_blendv_ps(min, v, keep));
  }
  KERNEL_TARGET static inline void Store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  KERNEL_TARGET static inline void StorePartial(float* p, Reg v, size_t lanes) {
    _mm256_maskstore_ps(p, TailMask(lanes), v);
  }
};

#include "gemm-simd-tiles.inc"

}  // namespace

KERNEL_TARGET void GemmAvx2Fma(const GemmProblem& problem, size_t block_begin,
                               size_t block_end, size_t row_begin, size_t row_end) {
  GemmRange(problem, block_begin, block_end, row_begin, row_end);
}

#undef KERNEL_TARGET

}  // namespace mmap_native
#endif
