// Runs one checked GemmProblem: picks the kernel for its tiling and instruction set, and
// splits the work over threads when there is enough of it.
#ifndef MMAP_NATIVE_KERNELS_GEMM_RUN_H
#define MMAP_NATIVE_KERNELS_GEMM_RUN_H

#include <cstddef>

#include "cpu-isa.h"
#include "gemm-problem.h"

namespace mmap_native {

class ThreadPool;

// Work below this many multiply-adds per thread stays on the calling thread: a 128×128
// layer is split from batch 16 on (1 µs of AVX-512 FMAs per thread), never at batch 1 (16 Ki
// multiply-adds). Below it a second thread gained under 10% even on an idle machine
// (1024 × 128², batch 4 and 8), less than a busy one takes back when a helper that joined
// is descheduled and the caller must wait for it.
constexpr size_t kMinMultiplyAddsPerThread = size_t{1} << 17;

// How many threads a problem is worth, at most `threads`.
size_t GemmThreadsFor(const GemmProblem& problem, size_t threads);

// Runs the problem with `isa` (which the CPU must support) on the calling thread and, when
// `threads` > 1, on threads - 1 threads of `pool` (which may then not be null).
void RunGemm(const GemmProblem& problem, GemmIsa isa, size_t threads, ThreadPool* pool);

}  // namespace mmap_native

#endif
