#include "gemm-chain-binding.h"

#include <string>
#include <utility>
#include <vector>

#include "../util/errors.h"
#include "gemm-chain.h"
#include "gemm-plan-handle.h"

namespace mmap_native {

namespace {

// Marks the objects gemmF32Chain made: no other object, another wrapped one included,
// is taken for a chain.
constexpr napi_type_tag kChainTag = {0x6d6d61705f636861, 0x696e5f6633325f31};

// A bound on layers, far above any model's (ExecuTorch graphs have thousands of nodes).
constexpr uint32_t kMaxLayers = 1u << 20;

struct HeldChain {
  GemmChain chain;
  // Strong references to each layer's weights: their buffers live as long as the chain.
  std::vector<napi_ref> packed;
  // Each run's checked weights, kept to allocate nothing per run.
  std::vector<const float*> weights;
};

void FreeChain(napi_env env, void* data, void* /*hint*/) {
  auto* held = static_cast<HeldChain*>(data);
  for (napi_ref ref : held->packed) napi_delete_reference(env, ref);
  delete held;
}

// Reads array[index]; false when that threw (a getter), the exception pending.
bool ElementOf(Napi::Env env, napi_value array, uint32_t index, napi_value* out) {
  return napi_get_element(env, array, index, out) == napi_ok;
}

bool ReadLength(Napi::Env env, Napi::Value value, const char* name, uint32_t* length) {
  if (!value.IsArray()) {
    ThrowTypeError(env, std::string("Expected an array for ") + name);
    return false;
  }
  *length = value.As<Napi::Array>().Length();
  if (*length < 1 || *length > kMaxLayers) {
    ThrowRangeError(env, std::string("Expected 1 to ") + std::to_string(kMaxLayers) +
                             " layers for " + name + ", not " + std::to_string(*length));
    return false;
  }
  return true;
}

Napi::Value GemmF32Chain(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t layers = 0;
  uint32_t packed_layers = 0;
  if (!ReadLength(env, info[0], "plans", &layers) ||
      !ReadLength(env, info[1], "packed", &packed_layers)) {
    return env.Undefined();
  }
  if (packed_layers != layers) {
    ThrowRangeError(env, "Expected as many packed weights as plans (" + std::to_string(layers) +
                             "), not " + std::to_string(packed_layers));
    return env.Undefined();
  }
  std::vector<GemmPlan> plans;
  std::vector<napi_value> packed(layers);
  plans.reserve(layers);
  for (uint32_t i = 0; i < layers; ++i) {
    napi_value plan_value;
    const float* weights = nullptr;
    if (!ElementOf(env, info[0], i, &plan_value) ||
        !ElementOf(env, info[1], i, &packed[i])) {
      return env.Undefined();
    }
    const GemmPlan* plan = GemmPlanOf(env, Napi::Value(env, plan_value));
    if (plan == nullptr ||
        !ReadGemmPacked(env, *plan, Napi::Value(env, packed[i]), i, &weights)) {
      return env.Undefined();
    }
    if (i > 0 && plan->kc != plans.back().nc) {
      ThrowTypeError(env,
                     "Expected layer " + std::to_string(i) + "'s kc (" +
                         std::to_string(plan->kc) + ") to be layer " + std::to_string(i - 1) +
                         "'s nc (" + std::to_string(plans.back().nc) + ")",
                     "ERR_INVALID_ARG_VALUE");
      return env.Undefined();
    }
    plans.push_back(*plan);
  }
  auto* held = new HeldChain{GemmChain(std::move(plans)), {}, {}};
  held->packed.reserve(layers);
  held->weights.resize(layers);
  Napi::Object chain = Napi::Object::New(env);
  if (napi_wrap(env, chain, held, FreeChain, nullptr, nullptr) != napi_ok) {
    delete held;
    Napi::Error::New(env, "Could not make a GEMM chain").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // From here the finalizer frees `held` and the references it holds.
  for (napi_value value : packed) {
    napi_ref ref;
    if (napi_create_reference(env, value, 1, &ref) != napi_ok) {
      Napi::Error::New(env, "Could not make a GEMM chain").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    held->packed.push_back(ref);
  }
  if (napi_type_tag_object(env, chain, &kChainTag) != napi_ok) {
    Napi::Error::New(env, "Could not make a GEMM chain").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return chain;
}

HeldChain* ChainOf(Napi::Env env, Napi::Value value) {
  bool tagged = false;
  void* data = nullptr;
  // Objects only: the tag check converts anything else to an object, which throws for
  // undefined and null. An object made here is both tagged and wrapped.
  if (!value.IsObject() ||
      napi_check_object_type_tag(env, value, &kChainTag, &tagged) != napi_ok || !tagged ||
      napi_unwrap(env, value, &data) != napi_ok || data == nullptr) {
    ThrowTypeError(env, "Expected a chain made by gemmF32Chain for chain");
    return nullptr;
  }
  return static_cast<HeldChain*>(data);
}

Napi::Value GemmF32ChainRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HeldChain* held = ChainOf(env, info[0]);
  GemmIo io;
  if (held == nullptr ||
      !ReadGemmIo(env, held->chain.kc(), held->chain.nc(), info[1], info[2], info[3], &io)) {
    return env.Undefined();
  }
  const std::vector<GemmPlan>& plans = held->chain.plans();
  for (size_t i = 0; i < plans.size(); ++i) {
    napi_value packed;
    if (napi_get_reference_value(env, held->packed[i], &packed) != napi_ok ||
        !ReadGemmPacked(env, plans[i], Napi::Value(env, packed), i, &held->weights[i])) {
      return env.Undefined();
    }
  }
  // Only the last layer writes the output; it reads the last weights meanwhile.
  if (BytesOverlap(io.output, io.batch * held->chain.nc() * sizeof(float),
                   held->weights.back(), plans.back().packed_bytes)) {
    ThrowTypeError(env, "Expected an output that overlaps neither the input nor the weights",
                   "ERR_INVALID_ARG_VALUE");
    return env.Undefined();
  }
  if (!held->chain.Reserve(io.batch)) {
    ThrowRangeError(env, "Expected a batch whose intermediates fit in memory, not " +
                             std::to_string(io.batch) + " rows");
    return env.Undefined();
  }
  held->chain.Run(env, held->weights.data(), io.input, io.output, io.batch);
  return env.Undefined();
}

}  // namespace

void InitGemmChain(Napi::Env env, Napi::Object exports) {
  exports.Set("gemmF32Chain", Napi::Function::New<GemmF32Chain>(env, "gemmF32Chain"));
  exports.Set("gemmF32ChainRun", Napi::Function::New<GemmF32ChainRun>(env, "gemmF32ChainRun"));
}

}  // namespace mmap_native
