// The arm64 SIMD GEMM kernel (weights packed with kr = 1, sr = 1; any nr): a GemmRangeFn
// over Advanced SIMD (NEON), which every arm64 CPU has.
#ifndef MMAP_NATIVE_KERNELS_GEMM_ARM64_H
#define MMAP_NATIVE_KERNELS_GEMM_ARM64_H

#include <cstddef>

#include "gemm-problem.h"

// Built with GCC or Clang for arm64 (AArch64), where NEON needs no target attribute.
#if defined(__aarch64__) && defined(__GNUC__)
#define MMAP_NATIVE_GEMM_ARM64 1
#else
#define MMAP_NATIVE_GEMM_ARM64 0
#endif

#if MMAP_NATIVE_GEMM_ARM64
namespace mmap_native {

void GemmNeon(const GemmProblem& problem, size_t block_begin, size_t block_end,
              size_t row_begin, size_t row_end);

// Rows of one register tile (MR): the thread split cuts row ranges at multiples of it.
constexpr size_t kNeonTileRows = 6;

}  // namespace mmap_native
#endif

#endif
