// The GEMM kernels' JavaScript functions: gemmF32, gemmF32Plan, gemmF32Run and gemmIsas.
#ifndef MMAP_NATIVE_KERNELS_GEMM_BINDING_H
#define MMAP_NATIVE_KERNELS_GEMM_BINDING_H

#include <napi.h>

namespace mmap_native {

void InitGemmKernels(Napi::Env env, Napi::Object exports);

}  // namespace mmap_native

#endif
