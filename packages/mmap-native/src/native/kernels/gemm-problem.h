// One f32 GEMM over weights packed in XNNPACK's GEMM layout (xnn_pack_f32_gemm_goi_w): the
// arguments every kernel of this folder reads, checked by gemm-binding.cc before any kernel
// runs.
//
// The packed layout, per block of nr output channels (the last block's rows past nc are
// padding, never read into an output):
//   nr bias floats,
//   then for t = 0, kr, 2·kr, ... < padded_kc: nr·kr floats, row o's kr consecutive input
//   columns, rotated within groups of sr·kr columns when sr > 1 (see PackedColumn),
//   then extra_bytes the kernels skip.
// Input columns kc .. padded_kc - 1 do not exist: they count as zeros.
#ifndef MMAP_NATIVE_KERNELS_GEMM_PROBLEM_H
#define MMAP_NATIVE_KERNELS_GEMM_PROBLEM_H

#include <cstddef>

namespace mmap_native {

struct GemmProblem {
  const float* packed;  // block 0; 4-byte aligned
  const float* input;   // [batch][kc]
  float* output;        // [batch][nc]
  size_t batch;
  size_t nc;
  size_t kc;
  size_t nr;
  size_t kr;
  size_t sr;
  size_t padded_kc;     // kc rounded up to sr·kr
  size_t block_floats;  // nr·(1 + padded_kc) + extra_bytes / 4
  size_t blocks;        // ceil(nc / nr)
  // Outputs are clamped to [output_min, output_max] unless both are infinite (XNNPACK then
  // runs its linear ukernel, which does not clamp, so NaN outputs stay NaN).
  bool clamp;
  float output_min;
  float output_max;
};

// The input column that slot t (a multiple of kr) of row o of a block holds. XNNPACK's
// packer rotates each row's kr-chunks within a group of sr·kr columns (sr·kr is a power of
// two): XNNPACK 92a7ad50 src/reference/packing.cc xnn_pack_f32_gemm_goi_w.
inline size_t PackedColumn(size_t t, size_t o, size_t kr, size_t sr) {
  if (sr == 1) return t;
  const size_t mask = sr * kr - 1;
  return (t & ~mask) + ((t + o * kr) & mask);
}

// Clamps as the JavaScript kernel's clampOutputs does: NaN, and anything below min, becomes
// min; then anything above max becomes max. A value equal to a bound keeps its own sign of
// zero.
inline float ClampOutput(float v, float min, float max) {
  if (!(v >= min)) return min;
  return v > max ? max : v;
}

// Computes the outputs of blocks [block_begin, block_end) for input rows [row_begin, row_end).
using GemmRangeFn = void (*)(const GemmProblem& problem, size_t block_begin, size_t block_end,
                             size_t row_begin, size_t row_end);

}  // namespace mmap_native

#endif
