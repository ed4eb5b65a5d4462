// CRC32C (Castagnoli) with the CPU's instruction when it has one.
#ifndef MMAP_NATIVE_UTIL_CRC32C_H
#define MMAP_NATIVE_UTIL_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace mmap_native {

// The CRC32C of `length` bytes at `data`, continuing from `previous` (0 to start).
uint32_t Crc32c(uint32_t previous, const uint8_t* data, size_t length);

// "sse4.2" (x86-64) or "armv8-crc32" (arm64) when Crc32c uses the CPU's crc32c
// instruction, else "table" (slicing by 8).
const char* Crc32cImplementation();

}  // namespace mmap_native

#endif
