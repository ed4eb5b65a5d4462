// The GEMM kernel for every tiling and CPU: plain C++, no SIMD intrinsics.
#ifndef MMAP_NATIVE_KERNELS_GEMM_PORTABLE_H
#define MMAP_NATIVE_KERNELS_GEMM_PORTABLE_H

#include <cstddef>

#include "gemm-problem.h"

namespace mmap_native {

// A GemmRangeFn for any (nr, kr, sr). Sums each output in float64 in the order of the
// JavaScript kernel (bias, then slot by slot, padded columns times zero), so its outputs
// are the JavaScript kernel's, bit for bit.
void GemmPortable(const GemmProblem& problem, size_t block_begin, size_t block_end,
                  size_t row_begin, size_t row_end);

}  // namespace mmap_native

#endif
