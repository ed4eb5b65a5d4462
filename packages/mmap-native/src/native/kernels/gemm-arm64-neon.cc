// NEON (every arm64 CPU): 6 rows × up to 4 vectors of 4. 24 accumulators, 4 weight vectors
// and a broadcast input fit the 32 vector registers; XNNPACK's arm64 configs pack nr 8
// (2 vectors) or 16 (4 vectors) for this kernel's layout.
#include "gemm-arm64.h"

#if MMAP_NATIVE_GEMM_ARM64
#include <arm_neon.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace mmap_native {

namespace {

#define KERNEL_TARGET

struct V {
  using Reg = float32x4_t;
  using Mask = size_t;  // a partial vector goes through memory, as with SSE2
  static constexpr size_t kLanes = 4;
  static constexpr size_t kTileRows = kNeonTileRows;
  static constexpr size_t kTileVectors = 4;

  static inline Reg Load(const float* p) { return vld1q_f32(p); }
  static inline Reg LoadMasked(const float* p, Mask lanes) {
    float lanes_in[kLanes] = {0, 0, 0, 0};
    std::memcpy(lanes_in, p, lanes * sizeof(float));
    return vld1q_f32(lanes_in);
  }
  static inline Reg Broadcast(float f) { return vdupq_n_f32(f); }
  // One rounding, as the AVX2 and AVX-512 kernels' FMA.
  static inline Reg Fma(Reg a, Reg b, Reg acc) { return vfmaq_f32(acc, a, b); }
  static inline Reg Add(Reg a, Reg b) { return vaddq_f32(a, b); }
  static inline Mask TailMask(size_t lanes) { return lanes; }
  // v >= min ? v : min (NaN → min), then max < v ? max : v: selects, not FMIN/FMAX, so
  // that a value equal to a bound keeps its own sign of zero (clampOutputs' rules).
  static inline Reg Clamp(Reg v, Reg min, Reg max) {
    const Reg low = vbslq_f32(vcgeq_f32(v, min), v, min);
    return vbslq_f32(vcltq_f32(max, low), max, low);
  }
  static inline void Store(float* p, Reg v) { vst1q_f32(p, v); }
  static inline void StorePartial(float* p, Reg v, size_t lanes) {
    float lanes_out[kLanes];
    vst1q_f32(lanes_out, v);
    std::memcpy(p, lanes_out, lanes * sizeof(float));
  }
};

#include "gemm-simd-tiles.inc"

}  // namespace

void GemmNeon(const GemmProblem& problem, size_t block_begin, size_t block_end,
              size_t row_begin, size_t row_end) {
  GemmRange(problem, block_begin, block_end, row_begin, row_end);
}

#undef KERNEL_TARGET

}  // namespace mmap_native
#endif
