#include "cpu-isa.h"

#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace mmap_native {

const char* GemmIsaName(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512f:
      return "avx512f";
    case GemmIsa::kAvx2Fma:
      return "avx2-fma";
    case GemmIsa::kSse2:
      return "sse2";
    case GemmIsa::kNeon:
      return "neon";
    case GemmIsa::kPortable:
      break;
  }
  return "portable";
}

bool GemmIsaSupported(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kPortable:
      return true;
#if defined(__x86_64__) && defined(__GNUC__)
    // libgcc's and compiler-rt's checks also ask XGETBV whether the OS saves the YMM/ZMM
    // state, so a CPU flag alone never enables a kernel the OS cannot run.
    case GemmIsa::kSse2:
      return true;  // part of x86-64
    case GemmIsa::kAvx2Fma:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GemmIsa::kAvx512f:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
    default:
      return false;
#elif defined(__aarch64__) && defined(__GNUC__)
    case GemmIsa::kNeon:
      return true;  // part of arm64 (AArch64)
    default:
      return false;
#else
    default:
      return false;
#endif
  }
  return false;
}

GemmIsa BestGemmIsa() {
  for (GemmIsa isa : {GemmIsa::kAvx512f, GemmIsa::kAvx2Fma, GemmIsa::kSse2, GemmIsa::kNeon}) {
    if (GemmIsaSupported(isa)) return isa;
  }
  return GemmIsa::kPortable;
}

bool ReadX86Cpu(X86Cpu* cpu) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  cpu->sse2 = __builtin_cpu_supports("sse2");
  cpu->avx = __builtin_cpu_supports("avx");
  cpu->fma3 = __builtin_cpu_supports("fma");
  cpu->avx512f = __builtin_cpu_supports("avx512f");
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
    // The vendor string is EBX, EDX, ECX: "AuthenticAMD", "GenuineIntel".
    std::memcpy(cpu->vendor, &ebx, 4);
    std::memcpy(cpu->vendor + 4, &edx, 4);
    std::memcpy(cpu->vendor + 8, &ecx, 4);
  }
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    // Linux arch/x86/lib/cpu.c x86_family() and x86_model().
    cpu->family = (eax >> 8) & 0xf;
    if (cpu->family == 0xf) cpu->family += (eax >> 20) & 0xff;
    cpu->model = (eax >> 4) & 0xf;
    if (cpu->family >= 0x6) cpu->model += ((eax >> 16) & 0xf) << 4;
  }
  return true;
#else
  (void)cpu;
  return false;
#endif
}

}  // namespace mmap_native
