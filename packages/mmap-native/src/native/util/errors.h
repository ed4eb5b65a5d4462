#ifndef MMAP_NATIVE_UTIL_ERRORS_H
#define MMAP_NATIVE_UTIL_ERRORS_H

#include <napi.h>

#include <string>

namespace mmap_native {

// Throws `new MmapError(undefined, { errno, syscall, path })`; the JS constructor fills in
// `code` (util.getSystemErrorName) and a Node-style message. Falls back to a plain Error
// carrying the same properties when no constructor was registered.
void ThrowSystemError(Napi::Env env, int err, const char* syscall, const std::string& path);

// The error ThrowSystemError would throw, as a value (a promise is rejected with it). Empty
// when the error constructor itself threw: the exception is then pending.
Napi::Value SystemError(Napi::Env env, int err, const char* syscall, const std::string& path);

// Throws an MmapError with a non-errno code (e.g. ERR_MMAP_PAST_EOF).
void ThrowCodeError(Napi::Env env, const char* code, const std::string& message,
                    const char* syscall, const std::string& path);

// Argument errors carry Node's codes, as the TypeScript layer's do.
void ThrowTypeError(Napi::Env env, const std::string& message,
                    const char* code = "ERR_INVALID_ARG_TYPE");
void ThrowRangeError(Napi::Env env, const std::string& message,
                     const char* code = "ERR_OUT_OF_RANGE");

}  // namespace mmap_native

#endif
