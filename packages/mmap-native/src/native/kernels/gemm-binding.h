// The GEMM kernels' JavaScript functions: gemmF32, gemmF32Plan, gemmF32Run and gemmIsas.
#ifndef MMAP_NATIVE_KERNELS_GEMM_BINDING_H
#define MMAP_NATIVE_KERNELS_GEMM_BINDING_H

#include <napi.h>

#include "gemm-args.h"

namespace mmap_native {

// Runs a checked problem of `plan` on the environment's pool when it is worth threads.
void RunGemmPlan(Napi::Env env, const GemmPlan& plan, const GemmProblem& problem);

void InitGemmKernels(Napi::Env env, Napi::Object exports);

}  // namespace mmap_native

#endif
