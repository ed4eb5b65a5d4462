// Per-environment state (one per main thread / worker), so the addon is worker-safe.
#ifndef MMAP_NATIVE_UTIL_ADDON_DATA_H
#define MMAP_NATIVE_UTIL_ADDON_DATA_H

#include <napi.h>

#include <memory>

namespace mmap_native {

class ThreadPool;
// Defined beside ThreadPool (kernels/thread-pool.cc), so this header needs only its name.
struct ThreadPoolDeleter {
  void operator()(ThreadPool* pool) const;
};

// The GEMM plans this environment made and has not freed (kernels/gemm-plan-handle.cc):
// shared with the plans themselves, whose finalizers may run after this data is deleted.
struct GemmPlans;
struct GemmPlansRelease {
  void operator()(GemmPlans* plans) const;
};

struct AddonData {
  // MmapError, defined in TypeScript and handed over by setErrorConstructor().
  Napi::FunctionReference error_constructor;
  Napi::FunctionReference file_constructor;
  Napi::FunctionReference mapping_constructor;
  Napi::FunctionReference background_write_constructor;
  // The GEMM kernels' threads: started by the first call that asks for more than one,
  // joined when this environment's data is deleted at its teardown.
  std::unique_ptr<ThreadPool, ThreadPoolDeleter> gemm_pool;
  // Made with the first plan.
  std::unique_ptr<GemmPlans, GemmPlansRelease> gemm_plans;
};

inline AddonData* GetAddonData(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

}  // namespace mmap_native

#endif
