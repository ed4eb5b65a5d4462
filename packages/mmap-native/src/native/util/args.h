// Argument decoding. The TypeScript layer validates first and produces the user-facing
// messages; these checks only keep the native side safe when it is called directly.
#ifndef MMAP_NATIVE_UTIL_ARGS_H
#define MMAP_NATIVE_UTIL_ARGS_H

#include <napi.h>

#include <cstdint>
#include <string>

namespace mmap_native {

// A non-negative 64-bit integer from a number (integral, <= 2^53-1) or a bigint (<= 2^63-1).
// Throws a TypeError/RangeError and returns false otherwise.
bool ReadUint64(Napi::Env env, Napi::Value value, const char* name, uint64_t* out);
bool ReadBool(Napi::Env env, Napi::Value value, const char* name, bool* out);
bool ReadInt32(Napi::Env env, Napi::Value value, const char* name, int32_t* out);
bool ReadString(Napi::Env env, Napi::Value value, const char* name, std::string* out);
// A Uint8Array's bytes (the view's, not its whole buffer). A detached buffer reads as no
// bytes (nullptr, 0). Throws "Expected a Uint8Array for <name>" and returns false otherwise.
bool ReadBytes(Napi::Env env, Napi::Value value, const char* name, const uint8_t** data,
               size_t* length);

// A number when it is exactly representable (<= 2^53-1), otherwise a bigint.
Napi::Value MakeUint64(Napi::Env env, uint64_t value);

}  // namespace mmap_native

#endif
