// The x86-64 SIMD GEMM kernels (weights packed with kr = 1, sr = 1; any nr). Each is a
// GemmRangeFn and runs only where GemmIsaSupported says its instruction set is there.
#ifndef MMAP_NATIVE_KERNELS_GEMM_X86_H
#define MMAP_NATIVE_KERNELS_GEMM_X86_H

#include <cstddef>

#include "gemm-problem.h"

// Target attributes and __builtin_cpu_supports are GCC and Clang features; other compilers
// (and other architectures) use the portable kernel only.
#if defined(__x86_64__) && defined(__GNUC__)
#define MMAP_NATIVE_GEMM_X86 1
#else
#define MMAP_NATIVE_GEMM_X86 0
#endif

#if MMAP_NATIVE_GEMM_X86
namespace mmap_native {

void GemmSse2(const GemmProblem& problem, size_t block_begin, size_t block_end,
              size_t row_begin, size_t row_end);
void GemmAvx2Fma(const GemmProblem& problem, size_t block_begin, size_t block_end,
                 size_t row_begin, size_t row_end);
void GemmAvx512f(const GemmProblem& problem, size_t block_begin, size_t block_end,
                 size_t row_begin, size_t row_end);

// Rows of one register tile (MR) of each kernel: the thread split cuts row ranges at
// multiples of it.
constexpr size_t kSse2TileRows = 4;
constexpr size_t kAvx2FmaTileRows = 6;
constexpr size_t kAvx512fTileRows = 8;

}  // namespace mmap_native
#endif

#endif
