// SSE2 (every x86-64 CPU): 4 rows × 2 vectors of 4, the tile of XNNPACK's 4x8 sse kernels.
#include "gemm-x86.h"

#if MMAP_NATIVE_GEMM_X86
#include <emmintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace mmap_native {

namespace {

#define KERNEL_TARGET __attribute__((target("sse2")))

struct V {
  using Reg = __m128;
  using Mask = size_t;  // SSE2 has no masked loads: a partial vector goes through memory
  static constexpr size_t kLanes = 4;
  static constexpr size_t kTileRows = kSse2TileRows;
  static constexpr size_t kTileVectors = 2;

  KERNEL_TARGET static inline Reg Load(const float* p) { return _mm_loadu_ps(p); }
  KERNEL_TARGET static inline Reg LoadMasked(const float* p, Mask lanes) {
    float lanes_in[kLanes] = {0, 0, 0, 0};
    std::memcpy(lanes_in, p, lanes * sizeof(float));
    return _mm_loadu_ps(lanes_in);
  }
  KERNEL_TARGET static inline Reg Broadcast(float f) { return _mm_set1_ps(f); }
  KERNEL_TARGET static inline Reg Fma(Reg a, Reg b, Reg acc) {
    return _mm_add_ps(_mm_mul_ps(a, b), acc);
  }
  KERNEL_TARGET static inline Reg Add(Reg a, Reg b) { return _mm_add_ps(a, b); }
  static inline Mask TailMask(size_t lanes) { return lanes; }
  // v >= min ? v : min (NaN → min), then max < v ? max : v (MINPS returns its second
  // operand on ties and NaN, so equal values keep their own sign of zero).
  KERNEL_TARGET static inline Reg Clamp(Reg v, Reg min, Reg max) {
    const Reg keep = _mm_cmpge_ps(v, min);
    return _mm_min_ps(max, _mm_or_ps(_mm_and_ps(keep, v), _mm_andnot_ps(keep, min)));
  }
  KERNEL_TARGET static inline void Store(float* p, Reg v) { _mm_storeu_ps(p, v); }
  KERNEL_TARGET static inline void StorePartial(float* p, Reg v, size_t lanes) {
    float lanes_out[kLanes];
    _mm_storeu_ps(lanes_out, v);
    std::memcpy(p, lanes_out, lanes * sizeof(float));
  }
};

#include "gemm-simd-tiles.inc"

}  // namespace

KERNEL_TARGET void GemmSse2(const GemmProblem& problem, size_t block_begin, size_t block_end,
                            size_t row_begin, size_t row_end) {
  GemmRange(problem, block_begin, block_end, row_begin, row_end);
}

#undef KERNEL_TARGET

}  // namespace mmap_native
#endif
