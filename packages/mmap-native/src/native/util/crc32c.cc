// CRC32C: the CPU's crc32c instruction when it has one, chosen at run time so that one
// binary serves every CPU of its architecture (SSE4.2 on x86-64; the CRC32 extension on
// arm64, optional in Armv8.0 and present on nearly every arm64 CPU), otherwise a portable
// slicing-by-8 table. Same values as @memlayer/cache-format's JavaScript crc32cOf, which
// tests compare against. No Node-API here: crc32c-binding.cc exports it.
#include "crc32c.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MMAP_NATIVE_CRC32C_SSE42 1
#include <nmmintrin.h>
#endif

#if defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define MMAP_NATIVE_CRC32C_ARM64 1
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace mmap_native {

namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // CRC32C, reflected

struct Tables {
  uint32_t slice[8][256];
};

// Entry [k][b]: the CRC of byte b followed by k zero bytes. Built by the compiler.
constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (kPolynomial & (0u - (crc & 1u)));
    tables.slice[0][byte] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t byte = 0; byte < 256; ++byte) {
      uint32_t before = tables.slice[k - 1][byte];
      tables.slice[k][byte] = (before >> 8) ^ tables.slice[0][before & 0xFF];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

// `crc` is the running (inverted) register, as in the loops below.
uint32_t UpdatePortable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kTables.slice;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);  // memcpy: no unaligned or aliasing read
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
#endif
  for (; n > 0; ++p, --n) crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return crc;
}

#ifdef MMAP_NATIVE_CRC32C_SSE42
__attribute__((target("sse4.2"))) uint32_t UpdateSse42(uint32_t crc, const uint8_t* p,
                                                       size_t n) {
  uint64_t wide = crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
  }
  crc = static_cast<uint32_t>(wide);
  for (; n > 0; ++p, --n) crc = _mm_crc32_u8(crc, *p);
  return crc;
}
#endif

#ifdef MMAP_NATIVE_CRC32C_ARM64
__attribute__((target("+crc"))) uint32_t UpdateArm64(uint32_t crc, const uint8_t* p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = __crc32cd(crc, word);
  }
  for (; n > 0; ++p, --n) crc = __crc32cb(crc, *p);
  return crc;
}
#endif

using Update = uint32_t (*)(uint32_t, const uint8_t*, size_t);

struct Choice {
  Update update;
  const char* name;
};

// Asked once, on first use (a function-local static is initialised thread-safely).
// MEMLAYER_CRC32C=table forces the portable path, so tests cover it on any CPU.
const Choice& Chosen() {
  static const Choice choice = [] {
    const char* forced = std::getenv("MEMLAYER_CRC32C");
    if (forced != nullptr && std::strcmp(forced, "table") == 0) {
      return Choice{UpdatePortable, "table"};
    }
#ifdef MMAP_NATIVE_CRC32C_SSE42
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) return Choice{UpdateSse42, "sse4.2"};
#endif
#ifdef MMAP_NATIVE_CRC32C_ARM64
    // Linux reports the CRC32 extension in the auxiliary vector's hardware capabilities.
    if ((getauxval(AT_HWCAP) & HWCAP_CRC32) != 0) return Choice{UpdateArm64, "armv8-crc32"};
#endif
    return Choice{UpdatePortable, "table"};
  }();
  return choice;
}

}  // namespace

uint32_t Crc32c(uint32_t previous, const uint8_t* data, size_t length) {
  if (length == 0) return previous;
  return ~Chosen().update(~previous, data, length);
}

const char* Crc32cImplementation() { return Chosen().name; }

}  // namespace mmap_native
