// The JavaScript side of crc32c.h.
#ifndef MMAP_NATIVE_UTIL_CRC32C_BINDING_H
#define MMAP_NATIVE_UTIL_CRC32C_BINDING_H

#include <napi.h>

namespace mmap_native {

// Adds crc32c(bytes: Uint8Array, previous?: u32) and crc32cImplementation() to exports.
void InitCrc32c(Napi::Env env, Napi::Object exports);

}  // namespace mmap_native

#endif
