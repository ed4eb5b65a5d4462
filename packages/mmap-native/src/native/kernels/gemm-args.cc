#include "gemm-args.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../util/errors.h"

namespace mmap_native {

namespace {

constexpr size_t kMaxDimension = 0x7fffffff;  // batch, nc, kc
constexpr size_t kMaxTile = 4096;             // nr, kr, sr (XNNPACK's are at most 64)
constexpr size_t kMaxThreads = 256;

struct Bytes {
  const uint8_t* data = nullptr;
  size_t length = 0;
};

bool ReadPacked(Napi::Env env, Napi::Value value, Bytes* out) {
  if (value.IsArrayBuffer()) {
    Napi::ArrayBuffer buffer = value.As<Napi::ArrayBuffer>();
    out->data = static_cast<const uint8_t*>(buffer.Data());
    out->length = buffer.ByteLength();
    return true;
  }
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (value.IsTypedArray() &&
      napi_get_typedarray_info(env, value, &type, &length, &data, nullptr, nullptr) == napi_ok &&
      type == napi_uint8_array) {
    out->data = static_cast<const uint8_t*>(data);  // already past the view's byte offset
    out->length = data == nullptr ? 0 : length;     // detached: nothing to read
    return true;
  }
  ThrowTypeError(env, "Expected a Uint8Array or an ArrayBuffer for packed");
  return false;
}

bool ReadFloats(Napi::Env env, Napi::Value value, const char* name, float** data,
                size_t* length) {
  napi_typedarray_type type;
  void* pointer = nullptr;
  size_t elements = 0;
  // napi_get_typedarray_info refuses anything but a typed array: no IsTypedArray first.
  if (napi_get_typedarray_info(env, value, &type, &elements, &pointer, nullptr, nullptr) !=
          napi_ok ||
      type != napi_float32_array) {
    ThrowTypeError(env, std::string("Expected a Float32Array for ") + name);
    return false;
  }
  *data = static_cast<float*>(pointer);
  *length = pointer == nullptr ? 0 : elements;
  return true;
}

bool ReadSize(Napi::Env env, Napi::Value value, const char* name, size_t min, size_t max,
              size_t* out) {
  double d;
  // napi_get_value_double refuses anything but a number: no IsNumber first.
  if (napi_get_value_double(env, value, &d) != napi_ok) {
    ThrowTypeError(env, std::string("Expected an integer for ") + name);
    return false;
  }
  if (!(d >= static_cast<double>(min) && d <= static_cast<double>(max)) || std::floor(d) != d) {
    ThrowRangeError(env, std::string("Expected an integer between ") + std::to_string(min) +
                             " and " + std::to_string(max) + " for " + name);
    return false;
  }
  *out = static_cast<size_t>(d);
  return true;
}

bool ReadBound(Napi::Env env, Napi::Value value, const char* name, float* out) {
  if (!value.IsNumber()) {
    ThrowTypeError(env, std::string("Expected a number for ") + name);
    return false;
  }
  const double d = value.As<Napi::Number>().DoubleValue();
  if (std::isnan(d)) {
    ThrowRangeError(env, std::string("Expected a number other than NaN for ") + name);
    return false;
  }
  *out = static_cast<float>(d);  // XNNPACK takes the bounds as float
  return true;
}

bool ReadIsa(Napi::Env env, Napi::Value value, GemmIsa* out) {
  if (!value.IsNumber()) {
    ThrowTypeError(env, "Expected an integer for isa");
    return false;
  }
  const double d = value.As<Napi::Number>().DoubleValue();
  if (d == -1) {
    *out = BestGemmIsa();
    return true;
  }
  if (!(d >= 0 && d < kGemmIsaCount) || std::floor(d) != d) {
    ThrowRangeError(env, "Expected -1 (the best) or an instruction set's code for isa");
    return false;
  }
  *out = static_cast<GemmIsa>(static_cast<int>(d));
  if (!GemmIsaSupported(*out)) {
    ThrowTypeError(env,
                   std::string("Expected an instruction set this CPU has for isa, not ") +
                       GemmIsaName(*out),
                   "ERR_INVALID_ARG_VALUE");
    return false;
  }
  return true;
}

// a·b, or false when it does not fit in size_t.
bool Multiply(size_t a, size_t b, size_t* out) {
  if (a != 0 && b > std::numeric_limits<size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

}  // namespace

bool BytesOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a);
  const uintptr_t b0 = reinterpret_cast<uintptr_t>(b);
  return a_bytes != 0 && b_bytes != 0 && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

bool ReadGemmPlan(const Napi::CallbackInfo& info, size_t first, GemmPlan* plan) {
  Napi::Env env = info.Env();
  size_t extra_bytes;
  if (!ReadSize(env, info[first], "nc", 1, kMaxDimension, &plan->nc) ||
      !ReadSize(env, info[first + 1], "kc", 1, kMaxDimension, &plan->kc) ||
      !ReadSize(env, info[first + 2], "nr", 1, kMaxTile, &plan->nr) ||
      !ReadSize(env, info[first + 3], "kr", 1, kMaxTile, &plan->kr) ||
      !ReadSize(env, info[first + 4], "sr", 1, kMaxTile, &plan->sr) ||
      !ReadSize(env, info[first + 5], "extraBytes", 0, kMaxDimension, &extra_bytes) ||
      !ReadBound(env, info[first + 6], "outputMin", &plan->output_min) ||
      !ReadBound(env, info[first + 7], "outputMax", &plan->output_max) ||
      !ReadSize(env, info[first + 8], "threads", 1, kMaxThreads, &plan->threads) ||
      !ReadIsa(env, info[first + 9], &plan->isa)) {
    return false;
  }
  const size_t skr = plan->sr * plan->kr;
  if ((skr & (skr - 1)) != 0) {
    ThrowTypeError(env, "Expected sr·kr to be a power of two", "ERR_INVALID_ARG_VALUE");
    return false;
  }
  if (extra_bytes % 4 != 0) {
    ThrowTypeError(env, "Expected a multiple of 4 for extraBytes", "ERR_INVALID_ARG_VALUE");
    return false;
  }
  if (plan->output_min > plan->output_max) {
    ThrowRangeError(env, "Expected outputMin <= outputMax");
    return false;
  }
  // Every size below is small enough not to overflow (dimensions < 2^31, tiles <= 2^12),
  // except the packed size, which is multiplied with a check.
  plan->padded_kc = (plan->kc + skr - 1) / skr * skr;
  plan->block_floats = plan->nr * (1 + plan->padded_kc) + extra_bytes / 4;
  plan->blocks = (plan->nc + plan->nr - 1) / plan->nr;
  size_t packed_floats = 0;
  if (!Multiply(plan->blocks, plan->block_floats, &packed_floats) ||
      !Multiply(packed_floats, sizeof(float), &plan->packed_bytes)) {
    ThrowRangeError(env, "Expected packed weights that fit in memory, not " +
                             std::to_string(plan->blocks) + " blocks of " +
                             std::to_string(plan->block_floats) + " floats");
    return false;
  }
  plan->clamp = !(std::isinf(plan->output_min) && plan->output_min < 0 &&
                  std::isinf(plan->output_max) && plan->output_max > 0);
  return true;
}

namespace {

// Made only for a message: a chain checks every layer's weights at every run.
std::string WeightsName(size_t layer) {
  return layer == kNoLayer ? "packed weights" : "packed weights of layer " + std::to_string(layer);
}

}  // namespace

bool ReadGemmPacked(Napi::Env env, const GemmPlan& plan, Napi::Value packed_value,
                    size_t layer, const float** out) {
  Bytes packed;
  if (!ReadPacked(env, packed_value, &packed)) return false;
  if (packed.length < plan.packed_bytes) {
    ThrowRangeError(env, "Expected " + WeightsName(layer) + " of at least " +
                             std::to_string(plan.blocks) + " blocks of " +
                             std::to_string(plan.block_floats * sizeof(float)) + " bytes, not " +
                             std::to_string(packed.length) + " bytes");
    return false;
  }
  if (reinterpret_cast<uintptr_t>(packed.data) % alignof(float) != 0) {
    ThrowTypeError(env, "Expected " + WeightsName(layer) + " that start at a multiple of 4 bytes",
                   "ERR_INVALID_ARG_VALUE");
    return false;
  }
  *out = reinterpret_cast<const float*>(packed.data);
  return true;
}

bool ReadGemmIo(Napi::Env env, size_t kc, size_t nc, Napi::Value input_value,
                Napi::Value output_value, Napi::Value batch_value, GemmIo* io) {
  float* input = nullptr;
  float* output = nullptr;
  size_t input_length = 0;
  size_t output_length = 0;
  size_t batch;
  if (!ReadFloats(env, input_value, "input", &input, &input_length) ||
      !ReadFloats(env, output_value, "output", &output, &output_length) ||
      !ReadSize(env, batch_value, "batch", 1, kMaxDimension, &batch)) {
    return false;
  }
  if (input_length / batch < kc) {
    ThrowRangeError(env, "Expected at least batch·kc = " + std::to_string(batch * kc) +
                             " floats of input, not " + std::to_string(input_length));
    return false;
  }
  if (output_length / batch < nc) {
    ThrowRangeError(env, "Expected room for batch·nc = " + std::to_string(batch * nc) +
                             " floats of output, not " + std::to_string(output_length));
    return false;
  }
  // Both products fit: they are at most the lengths just checked.
  if (BytesOverlap(output, batch * nc * sizeof(float), input, batch * kc * sizeof(float))) {
    ThrowTypeError(env, "Expected an output that overlaps neither the input nor the weights",
                   "ERR_INVALID_ARG_VALUE");
    return false;
  }
  *io = GemmIo{input, output, batch};
  return true;
}

GemmProblem GemmProblemOf(const GemmPlan& plan, const float* packed, const float* input,
                          float* output, size_t batch) {
  return GemmProblem{packed,
                     input,
                     output,
                     batch,
                     plan.nc,
                     plan.kc,
                     plan.nr,
                     plan.kr,
                     plan.sr,
                     plan.padded_kc,
                     plan.block_floats,
                     plan.blocks,
                     plan.clamp,
                     plan.output_min,
                     plan.output_max};
}

bool ReadGemmCall(Napi::Env env, const GemmPlan& plan, Napi::Value packed_value,
                  Napi::Value input_value, Napi::Value output_value, Napi::Value batch_value,
                  GemmProblem* problem) {
  const float* packed = nullptr;
  GemmIo io;
  if (!ReadGemmPacked(env, plan, packed_value, kNoLayer, &packed) ||
      !ReadGemmIo(env, plan.kc, plan.nc, input_value, output_value, batch_value, &io)) {
    return false;
  }
  if (BytesOverlap(io.output, io.batch * plan.nc * sizeof(float), packed, plan.packed_bytes)) {
    ThrowTypeError(env, "Expected an output that overlaps neither the input nor the weights",
                   "ERR_INVALID_ARG_VALUE");
    return false;
  }
  *problem = GemmProblemOf(plan, packed, io.input, io.output, io.batch);
  return true;
}

}  // namespace mmap_native
