// gemmF32(packed, input, output, batch, nc, kc, nr, kr, sr, extraBytes, outputMin,
//         outputMax, threads, isa): output[batch][nc] = input[batch][kc] · Wᵀ + bias from
// weights packed in XNNPACK's GEMM layout (gemm-problem.h), read in place.
// gemmIsas(): the instruction sets this CPU runs the kernels with, widest first.
//
// src/kernels/gemm-kernels.ts validates first and words the user-facing errors; every
// check is repeated here so that no argument, however hostile, makes a kernel read or
// write outside the buffers it was given.
#include "gemm-binding.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../util/addon_data.h"
#include "../util/errors.h"
#include "cpu-isa.h"
#include "gemm-problem.h"
#include "gemm-run.h"
#include "thread-pool.h"

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
  if (!value.IsTypedArray() ||
      napi_get_typedarray_info(env, value, &type, &elements, &pointer, nullptr, nullptr) !=
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
  if (!value.IsNumber()) {
    ThrowTypeError(env, std::string("Expected an integer for ") + name);
    return false;
  }
  const double d = value.As<Napi::Number>().DoubleValue();
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

bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a);
  const uintptr_t b0 = reinterpret_cast<uintptr_t>(b);
  return a_bytes != 0 && b_bytes != 0 && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

Napi::Value GemmF32(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Bytes packed;
  float* input = nullptr;
  float* output = nullptr;
  size_t input_length = 0;
  size_t output_length = 0;
  size_t batch, nc, kc, nr, kr, sr, extra_bytes, threads;
  float output_min, output_max;
  GemmIsa isa;
  if (!ReadPacked(env, info[0], &packed) ||
      !ReadFloats(env, info[1], "input", &input, &input_length) ||
      !ReadFloats(env, info[2], "output", &output, &output_length) ||
      !ReadSize(env, info[3], "batch", 1, kMaxDimension, &batch) ||
      !ReadSize(env, info[4], "nc", 1, kMaxDimension, &nc) ||
      !ReadSize(env, info[5], "kc", 1, kMaxDimension, &kc) ||
      !ReadSize(env, info[6], "nr", 1, kMaxTile, &nr) ||
      !ReadSize(env, info[7], "kr", 1, kMaxTile, &kr) ||
      !ReadSize(env, info[8], "sr", 1, kMaxTile, &sr) ||
      !ReadSize(env, info[9], "extraBytes", 0, kMaxDimension, &extra_bytes) ||
      !ReadBound(env, info[10], "outputMin", &output_min) ||
      !ReadBound(env, info[11], "outputMax", &output_max) ||
      !ReadSize(env, info[12], "threads", 1, kMaxThreads, &threads) ||
      !ReadIsa(env, info[13], &isa)) {
    return env.Undefined();
  }
  const size_t skr = sr * kr;
  if ((skr & (skr - 1)) != 0) {
    ThrowTypeError(env, "Expected sr·kr to be a power of two", "ERR_INVALID_ARG_VALUE");
    return env.Undefined();
  }
  if (extra_bytes % 4 != 0) {
    ThrowTypeError(env, "Expected a multiple of 4 for extraBytes", "ERR_INVALID_ARG_VALUE");
    return env.Undefined();
  }
  if (output_min > output_max) {
    ThrowRangeError(env, "Expected outputMin <= outputMax");
    return env.Undefined();
  }
  // Every size below is small enough not to overflow (dimensions < 2^31, tiles <= 2^12),
  // except the packed size, which is multiplied with a check.
  const size_t padded_kc = (kc + skr - 1) / skr * skr;
  const size_t block_floats = nr * (1 + padded_kc) + extra_bytes / 4;
  const size_t blocks = (nc + nr - 1) / nr;
  size_t packed_floats = 0;
  size_t packed_bytes = 0;
  if (!Multiply(blocks, block_floats, &packed_floats) ||
      !Multiply(packed_floats, sizeof(float), &packed_bytes) || packed.length < packed_bytes) {
    ThrowRangeError(env, "Expected packed weights of at least " +
                             std::to_string(blocks) + " blocks of " +
                             std::to_string(block_floats * sizeof(float)) + " bytes, not " +
                             std::to_string(packed.length) + " bytes");
    return env.Undefined();
  }
  if (reinterpret_cast<uintptr_t>(packed.data) % alignof(float) != 0) {
    ThrowTypeError(env, "Expected packed weights that start at a multiple of 4 bytes",
                   "ERR_INVALID_ARG_VALUE");
    return env.Undefined();
  }
  if (input_length / batch < kc) {
    ThrowRangeError(env, "Expected at least batch·kc = " + std::to_string(batch * kc) +
                             " floats of input, not " + std::to_string(input_length));
    return env.Undefined();
  }
  if (output_length / batch < nc) {
    ThrowRangeError(env, "Expected room for batch·nc = " + std::to_string(batch * nc) +
                             " floats of output, not " + std::to_string(output_length));
    return env.Undefined();
  }
  const size_t output_bytes = batch * nc * sizeof(float);
  if (Overlap(output, output_bytes, input, batch * kc * sizeof(float)) ||
      Overlap(output, output_bytes, packed.data, packed_bytes)) {
    ThrowTypeError(env, "Expected an output that overlaps neither the input nor the weights",
                   "ERR_INVALID_ARG_VALUE");
    return env.Undefined();
  }

  const GemmProblem problem{reinterpret_cast<const float*>(packed.data),
                            input,
                            output,
                            batch,
                            nc,
                            kc,
                            nr,
                            kr,
                            sr,
                            padded_kc,
                            block_floats,
                            blocks,
                            !(std::isinf(output_min) && output_min < 0 &&
                              std::isinf(output_max) && output_max > 0),
                            output_min,
                            output_max};
  threads = GemmThreadsFor(problem, threads);
  ThreadPool* pool = nullptr;
  if (threads > 1) {
    // Created on the first call that splits its work; joined with the environment.
    AddonData* data = GetAddonData(env);
    if (!data->gemm_pool) data->gemm_pool.reset(new ThreadPool());
    pool = data->gemm_pool.get();
  }
  RunGemm(problem, isa, threads, pool);
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

}  // namespace

void InitGemmKernels(Napi::Env env, Napi::Object exports) {
  exports.Set("gemmF32", Napi::Function::New<GemmF32>(env, "gemmF32"));
  exports.Set("gemmIsas", Napi::Function::New<GemmIsas>(env, "gemmIsas"));
}

}  // namespace mmap_native
