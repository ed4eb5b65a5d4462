// The instruction sets the GEMM kernels are built for, and which of them this CPU runs.
// The addon is built once for every x86-64 CPU (no -march flags): the SIMD kernels are
// compiled with per-function target attributes and chosen at run time.
#ifndef MMAP_NATIVE_KERNELS_CPU_ISA_H
#define MMAP_NATIVE_KERNELS_CPU_ISA_H

namespace mmap_native {

// The numbers are the codes the JavaScript side passes (src/kernels/gemm-isa.ts).
enum class GemmIsa : int { kPortable = 0, kSse2 = 1, kAvx2Fma = 2, kAvx512f = 3 };
constexpr int kGemmIsaCount = 4;

const char* GemmIsaName(GemmIsa isa);

// Whether this CPU (and its operating system, which must save the wider registers) runs
// kernels of `isa`. Under valgrind, whose CPUID hides AVX-512, AVX-512F reads as absent.
bool GemmIsaSupported(GemmIsa isa);

// The widest supported instruction set.
GemmIsa BestGemmIsa();

}  // namespace mmap_native

#endif
