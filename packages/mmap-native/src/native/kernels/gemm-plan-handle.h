// A GemmPlan held by a JavaScript value: what gemmF32Plan returns and gemmF32Run takes.
// The value is an external (the cheapest value to read a pointer back from: each layer of
// a model reads it at every run); an external is taken as a plan only when this
// environment made it as one and has not freed it, so no other value, another addon's
// externals included, passes for a plan. The plan is freed when the value is collected.
#ifndef MMAP_NATIVE_KERNELS_GEMM_PLAN_HANDLE_H
#define MMAP_NATIVE_KERNELS_GEMM_PLAN_HANDLE_H

#include <napi.h>

#include "gemm-args.h"

namespace mmap_native {

// A new value holding a copy of `plan`; empty with a JavaScript exception pending when it
// cannot be made.
Napi::Value NewGemmPlanValue(Napi::Env env, const GemmPlan& plan);

// The plan `value` holds, or null with a TypeError pending when it holds none.
const GemmPlan* GemmPlanOf(Napi::Env env, Napi::Value value);

}  // namespace mmap_native

#endif
