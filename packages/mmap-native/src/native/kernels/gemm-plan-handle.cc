#include "gemm-plan-handle.h"

#include <unordered_set>

#include "../util/addon_data.h"
#include "../util/errors.h"

namespace mmap_native {

// The live plans of one environment. Counted references: one for AddonData, one per
// plan; each finalizer (of AddonData, of a plan) may run first at environment teardown.
// Only the environment's JavaScript thread touches it.
struct GemmPlans {
  std::unordered_set<const void*> live;
  size_t references = 1;
};

namespace {

struct HeldPlan {
  GemmPlan plan;
  GemmPlans* plans;
};

void Release(GemmPlans* plans) {
  if (--plans->references == 0) delete plans;
}

void FreePlan(napi_env /*env*/, void* data, void* /*hint*/) {
  auto* held = static_cast<HeldPlan*>(data);
  held->plans->live.erase(held);
  Release(held->plans);
  delete held;
}

}  // namespace

void GemmPlansRelease::operator()(GemmPlans* plans) const { Release(plans); }

Napi::Value NewGemmPlanValue(Napi::Env env, const GemmPlan& plan) {
  AddonData* data = GetAddonData(env);
  if (!data->gemm_plans) data->gemm_plans.reset(new GemmPlans());
  GemmPlans* plans = data->gemm_plans.get();
  auto* held = new HeldPlan{plan, plans};
  napi_value value;
  if (napi_create_external(env, held, FreePlan, nullptr, &value) != napi_ok) {
    delete held;
    Napi::Error::New(env, "Could not make a GEMM plan").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  ++plans->references;
  plans->live.insert(held);
  return Napi::Value(env, value);
}

const GemmPlan* GemmPlanOf(Napi::Env env, Napi::Value value) {
  void* data = nullptr;
  const GemmPlans* plans = GetAddonData(env)->gemm_plans.get();
  // Only a pointer found among the live plans is read through.
  if (napi_get_value_external(env, value, &data) != napi_ok || plans == nullptr ||
      plans->live.count(data) == 0) {
    ThrowTypeError(env, "Expected a plan made by gemmF32Plan for plan");
    return nullptr;
  }
  return &static_cast<const HeldPlan*>(data)->plan;
}

}  // namespace mmap_native
