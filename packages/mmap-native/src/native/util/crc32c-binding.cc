// crc32c(bytes: Uint8Array, previous?: u32) and crc32cImplementation(), exported to
// JavaScript over crc32c.cc's Crc32c.
#include "crc32c-binding.h"

#include <cmath>

#include "args.h"
#include "crc32c.h"
#include "errors.h"

namespace mmap_native {

namespace {

Napi::Value Crc32cFunction(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint8_t* data = nullptr;
  size_t length = 0;
  if (!ReadBytes(env, info[0], "bytes", &data, &length)) return env.Undefined();
  uint32_t previous = 0;
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    if (!info[1].IsNumber()) {
      ThrowTypeError(env, "Expected a number for previous");
      return env.Undefined();
    }
    double value = info[1].As<Napi::Number>().DoubleValue();
    if (!(value >= 0 && value <= 4294967295.0 && std::floor(value) == value)) {
      ThrowRangeError(env, "Expected an integer from 0 to 2^32-1 for previous");
      return env.Undefined();
    }
    previous = static_cast<uint32_t>(value);
  }
  return Napi::Number::New(env, Crc32c(previous, data, length));
}

Napi::Value ImplementationFunction(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), Crc32cImplementation());
}

}  // namespace

void InitCrc32c(Napi::Env env, Napi::Object exports) {
  exports.Set("crc32c", Napi::Function::New<Crc32cFunction>(env, "crc32c"));
  exports.Set("crc32cImplementation",
              Napi::Function::New<ImplementationFunction>(env, "crc32cImplementation"));
}

}  // namespace mmap_native
