// The instruction sets the GEMM kernels are built for, and which of them this CPU runs.
// The addon is built once for every x86-64 CPU (no -march flags): the SIMD kernels are
// compiled with per-function target attributes and chosen at run time. On arm64, NEON is
// part of the architecture.
#ifndef MMAP_NATIVE_KERNELS_CPU_ISA_H
#define MMAP_NATIVE_KERNELS_CPU_ISA_H

namespace mmap_native {

// The numbers are the codes the JavaScript side passes (src/kernels/gemm-isa.ts).
enum class GemmIsa : int { kPortable = 0, kSse2 = 1, kAvx2Fma = 2, kAvx512f = 3, kNeon = 4 };
constexpr int kGemmIsaCount = 5;

const char* GemmIsaName(GemmIsa isa);

// Whether this CPU (and its operating system, which must save the wider registers) runs
// kernels of `isa`. Under valgrind, whose CPUID hides AVX-512, AVX-512F reads as absent.
bool GemmIsaSupported(GemmIsa isa);

// The widest supported instruction set.
GemmIsa BestGemmIsa();

// An x86-64 CPU as Linux's /proc/cpuinfo shows it: SSE2, AVX, FMA3 and AVX-512F where the
// operating system saves their registers, the vendor string, and the family and model
// read from CPUID leaf 1 as the kernel reads them.
struct X86Cpu {
  bool sse2 = false;
  bool avx = false;
  bool fma3 = false;
  bool avx512f = false;
  char vendor[13] = {};
  unsigned family = 0;
  unsigned model = 0;
};

// Fills `cpu`; false on a CPU that is not x86-64.
bool ReadX86Cpu(X86Cpu* cpu);

}  // namespace mmap_native

#endif
