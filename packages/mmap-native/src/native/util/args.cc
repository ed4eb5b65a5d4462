#include "args.h"

#include <cmath>

#include "errors.h"

namespace mmap_native {

namespace {
constexpr double kMaxSafeInteger = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER
constexpr uint64_t kMaxOffset = static_cast<uint64_t>(INT64_MAX);  // off_t is signed 64-bit
}  // namespace

bool ReadUint64(Napi::Env env, Napi::Value value, const char* name, uint64_t* out) {
  if (value.IsNumber()) {
    double d = value.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d) || d < 0 || d > kMaxSafeInteger || std::floor(d) != d) {
      ThrowRangeError(env, std::string("Expected a non-negative safe integer for ") + name);
      return false;
    }
    *out = static_cast<uint64_t>(d);
    return true;
  }
  if (value.IsBigInt()) {
    bool lossless = false;
    uint64_t v = value.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless || v > kMaxOffset) {
      ThrowRangeError(env, std::string("Expected a bigint between 0 and 2^63-1 for ") + name);
      return false;
    }
    *out = v;
    return true;
  }
  ThrowTypeError(env, std::string("Expected a number or bigint for ") + name);
  return false;
}

bool ReadBool(Napi::Env env, Napi::Value value, const char* name, bool* out) {
  if (!value.IsBoolean()) {
    ThrowTypeError(env, std::string("Expected a boolean for ") + name);
    return false;
  }
  *out = value.As<Napi::Boolean>().Value();
  return true;
}

bool ReadInt32(Napi::Env env, Napi::Value value, const char* name, int32_t* out) {
  if (!value.IsNumber()) {
    ThrowTypeError(env, std::string("Expected an integer for ") + name);
    return false;
  }
  *out = value.As<Napi::Number>().Int32Value();
  return true;
}

bool ReadString(Napi::Env env, Napi::Value value, const char* name, std::string* out) {
  if (!value.IsString()) {
    ThrowTypeError(env, std::string("Expected a string for ") + name);
    return false;
  }
  *out = value.As<Napi::String>().Utf8Value();
  // A C path ends at the first NUL: "a\0/b" would silently open "a".
  if (out->find('\0') != std::string::npos) {
    ThrowTypeError(env, std::string("Expected a string without NUL bytes for ") + name,
                   "ERR_INVALID_ARG_VALUE");
    return false;
  }
  return true;
}

bool ReadBytes(Napi::Env env, Napi::Value value, const char* name, const uint8_t** data,
               size_t* length) {
  napi_typedarray_type type = napi_int8_array;
  void* bytes = nullptr;
  bool is_typed_array = false;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &type, length, &bytes, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array) {
    ThrowTypeError(env, std::string("Expected a Uint8Array for ") + name);
    return false;
  }
  *data = *length == 0 ? nullptr : static_cast<const uint8_t*>(bytes);
  return true;
}

Napi::Value MakeUint64(Napi::Env env, uint64_t value) {
  if (value <= static_cast<uint64_t>(kMaxSafeInteger)) {
    return Napi::Number::New(env, static_cast<double>(value));
  }
  return Napi::BigInt::New(env, value);
}

}  // namespace mmap_native
