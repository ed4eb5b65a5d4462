// gemmF32(packed, input, output, batch, nc, kc, nr, kr, sr, extraBytes, outputMin,
//         outputMax, threads, isa): output[batch][nc] = input[batch][kc] · Wᵀ + bias from
// weights packed in XNNPACK's GEMM layout (gemm-problem.h), read in place.
// gemmF32Plan(nc, kc, nr, kr, sr, extraBytes, outputMin, outputMax, threads, isa): the
// same arguments but the buffers and the batch, checked once, held by the object returned.
// gemmF32Run(plan, packed, input, output, batch): gemmF32 with a plan's arguments; only
// the buffers and the batch are read and checked (a model runs each layer's plan again
// and again, and reading ten numbers cost more than a small layer's arithmetic).
// gemmIsas(): the instruction sets this CPU runs the kernels with, widest first.
// x86Cpu(): { sse2, avx, fma3, avx512f, vendor, family, model } of this x86-64 CPU (what
// XNNPACK's GEMM choice reads), or null on another CPU.
// gemmF32Chain and gemmF32ChainRun: plans run one after another (gemm-chain-binding.h).
//
// src/kernels/ validates first and words the user-facing errors; gemm-args.cc checks
// everything again, so that no argument, however hostile, makes a kernel read or write
// outside the buffers it was given.
#include "gemm-binding.h"

#include "../util/addon_data.h"
#include "cpu-isa.h"
#include "gemm-args.h"
#include "gemm-chain-binding.h"
#include "gemm-plan-handle.h"
#include "gemm-run.h"
#include "thread-pool.h"

namespace mmap_native {

// The environment's pool is deleted with its AddonData (util/addon_data.h), here beside the
// only code that creates it: thread-pool.cc stays free of Node-API.
void ThreadPoolDeleter::operator()(ThreadPool* pool) const { delete pool; }

void RunGemmPlan(Napi::Env env, const GemmPlan& plan, const GemmProblem& problem) {
  const size_t threads = GemmThreadsFor(problem, plan.threads);
  ThreadPool* pool = nullptr;
  if (threads > 1) {
    // Created on the first call that splits its work; joined with the environment.
    AddonData* data = GetAddonData(env);
    if (!data->gemm_pool) data->gemm_pool.reset(new ThreadPool());
    pool = data->gemm_pool.get();
  }
  RunGemm(problem, plan.isa, threads, pool);
}

namespace {

Napi::Value GemmF32(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GemmPlan plan;
  GemmProblem problem;
  if (ReadGemmPlan(info, 4, &plan) &&
      ReadGemmCall(env, plan, info[0], info[1], info[2], info[3], &problem)) {
    RunGemmPlan(env, plan, problem);
  }
  return env.Undefined();
}

Napi::Value GemmF32Plan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GemmPlan plan;
  if (!ReadGemmPlan(info, 0, &plan)) return env.Undefined();
  return NewGemmPlanValue(env, plan);
}

Napi::Value GemmF32Run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const GemmPlan* plan = GemmPlanOf(env, info[0]);
  GemmProblem problem;
  if (plan != nullptr && ReadGemmCall(env, *plan, info[1], info[2], info[3], info[4], &problem)) {
    RunGemmPlan(env, *plan, problem);
  }
  return env.Undefined();
}

Napi::Value GemmIsas(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array isas = Napi::Array::New(env);
  uint32_t count = 0;
  for (int code = kGemmIsaCount - 1; code >= 0; --code) {
    const GemmIsa isa = static_cast<GemmIsa>(code);
    if (GemmIsaSupported(isa)) isas.Set(count++, Napi::String::New(env, GemmIsaName(isa)));
  }
  return isas;
}

Napi::Value X86CpuOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  X86Cpu cpu;
  if (!ReadX86Cpu(&cpu)) return env.Null();
  Napi::Object result = Napi::Object::New(env);
  result.Set("sse2", Napi::Boolean::New(env, cpu.sse2));
  result.Set("avx", Napi::Boolean::New(env, cpu.avx));
  result.Set("fma3", Napi::Boolean::New(env, cpu.fma3));
  result.Set("avx512f", Napi::Boolean::New(env, cpu.avx512f));
  result.Set("vendor", Napi::String::New(env, cpu.vendor));
  result.Set("family", Napi::Number::New(env, cpu.family));
  result.Set("model", Napi::Number::New(env, cpu.model));
  return result;
}

}  // namespace

void InitGemmKernels(Napi::Env env, Napi::Object exports) {
  exports.Set("gemmF32", Napi::Function::New<GemmF32>(env, "gemmF32"));
  exports.Set("gemmF32Plan", Napi::Function::New<GemmF32Plan>(env, "gemmF32Plan"));
  exports.Set("gemmF32Run", Napi::Function::New<GemmF32Run>(env, "gemmF32Run"));
  exports.Set("gemmIsas", Napi::Function::New<GemmIsas>(env, "gemmIsas"));
  exports.Set("x86Cpu", Napi::Function::New<X86CpuOf>(env, "x86Cpu"));
  InitGemmChain(env, exports);
}

}  // namespace mmap_native
