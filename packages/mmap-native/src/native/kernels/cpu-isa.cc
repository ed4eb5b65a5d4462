#include "cpu-isa.h"

#include <initializer_list>

namespace mmap_native {

const char* GemmIsaName(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512f:
      return "avx512f";
    case GemmIsa::kAvx2Fma:
      return "avx2-fma";
    case GemmIsa::kSse2:
      return "sse2";
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
#else
    default:
      return false;
#endif
  }
  return false;
}

GemmIsa BestGemmIsa() {
  for (GemmIsa isa : {GemmIsa::kAvx512f, GemmIsa::kAvx2Fma, GemmIsa::kSse2}) {
    if (GemmIsaSupported(isa)) return isa;
  }
  return GemmIsa::kPortable;
}

}  // namespace mmap_native
