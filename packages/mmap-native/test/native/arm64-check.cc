// The addon's arm64 code paths checked where no arm64 machine runs the test suite: built
// for arm64 and run under qemu-user by scripts/arm64-check.sh.
// - The NEON GEMM kernel, with the cases of test/gemm-kernels.test.ts (which runs every
//   instruction set of the machine it runs on): XNNPACK's arm64 tilings and odd ones, odd
//   shapes, batches that leave every remainder of the 6-row tile, extra bytes, NaN in
//   padding, clampOutputs' rules, threads. The oracle is the same: XNNPACK's packing loop,
//   and y = x·Wᵀ + b summed in double.
// - CRC32C with the CRC32 extension, against the RFC 3720 values and a bitwise CRC at every
//   length to 70, offsets and continuations (test/crc32c.test.ts's cases).
// Prints a line per part; exits 1 on the first mismatch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../src/native/kernels/cpu-isa.h"
#include "../../src/native/kernels/gemm-arm64.h"
#include "../../src/native/kernels/gemm-problem.h"
#include "../../src/native/kernels/gemm-run.h"
#include "../../src/native/kernels/thread-pool.h"
#include "../../src/native/util/crc32c.h"

#if !MMAP_NATIVE_GEMM_ARM64
#error "built for arm64 only"
#endif

namespace {

using mmap_native::GemmIsa;
using mmap_native::GemmProblem;

struct Shape {
  size_t nc, kc, nr, kr, sr, extra_bytes;
};

size_t checks = 0;

[[noreturn]] void Fail(const char* what, const Shape& s, size_t batch, size_t at, float got,
                       float want) {
  std::printf(
      "arm64 gemm: %s: nc %zu kc %zu nr %zu kr %zu sr %zu extra %zu batch %zu: output %zu "
      "is %.9g, expected %.9g\n",
      what, s.nc, s.kc, s.nr, s.kr, s.sr, s.extra_bytes, batch, at, got, want);
  std::exit(1);
}

// Deterministic floats in [-1, 1) from a 32-bit LCG (test/gemm-reference.ts floats()).
std::vector<float> Floats(size_t n, uint32_t seed) {
  std::vector<float> out(n);
  uint32_t s = seed == 0 ? 1 : seed;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    out[i] = static_cast<float>(static_cast<double>(s) / 4294967296.0 * 2 - 1);
  }
  return out;
}

size_t PaddedKc(const Shape& s) {
  const size_t skr = s.sr * s.kr;
  return (s.kc + skr - 1) / skr * skr;
}

// XNNPACK's xnn_pack_f32_gemm_goi_w for one group; padding rows and extra bytes hold filler.
std::vector<float> Pack(const Shape& s, const std::vector<float>& kernel,
                        const std::vector<float>& bias, float filler) {
  const size_t skr = s.sr * s.kr;
  const size_t padded_kc = PaddedKc(s);
  const size_t block_floats = s.nr * (1 + padded_kc) + s.extra_bytes / 4;
  const size_t blocks = (s.nc + s.nr - 1) / s.nr;
  std::vector<float> out(blocks * block_floats, filler);
  size_t p = 0;
  for (size_t start = 0; start < s.nc; start += s.nr) {
    const size_t size = std::min(s.nc - start, s.nr);
    for (size_t i = 0; i < size; ++i) out[p + i] = bias[start + i];
    p += s.nr;
    for (size_t kb = 0; kb < padded_kc; kb += s.kr) {
      for (size_t i = 0; i < size; ++i) {
        for (size_t j = 0; j < s.kr; ++j) {
          const size_t k = kb / skr * skr + ((kb + j + i * s.kr) & (skr - 1));
          out[p + j] = k < s.kc ? kernel[(start + i) * s.kc + k] : 0.0f;
        }
        p += s.kr;
      }
      p += (s.nr - size) * s.kr;
    }
    p += s.extra_bytes / 4;
  }
  return out;
}

// Outputs are clamped unless both bounds are infinite (GemmProblem::clamp).
bool Clamps(float min, float max) {
  return !(std::isinf(min) && min < 0 && std::isinf(max) && max > 0);
}

std::vector<float> Reference(const Shape& s, const std::vector<float>& kernel,
                             const std::vector<float>& bias, const std::vector<float>& input,
                             size_t batch, float min, float max) {
  const bool clamp = Clamps(min, max);
  std::vector<float> out(batch * s.nc);
  for (size_t r = 0; r < batch; ++r) {
    for (size_t o = 0; o < s.nc; ++o) {
      double acc = bias[o];
      for (size_t k = 0; k < s.kc; ++k) {
        acc += static_cast<double>(kernel[o * s.kc + k]) * input[r * s.kc + k];
      }
      const float v = static_cast<float>(acc);
      out[r * s.nc + o] = clamp ? mmap_native::ClampOutput(v, min, max) : v;
    }
  }
  return out;
}

std::vector<float> Run(const Shape& s, const std::vector<float>& packed,
                       const std::vector<float>& input, size_t batch, GemmIsa isa,
                       size_t threads, mmap_native::ThreadPool* pool, float min, float max) {
  std::vector<float> output(batch * s.nc, 42.0f);
  GemmProblem p{};
  p.packed = packed.data();
  p.input = input.data();
  p.output = output.data();
  p.batch = batch;
  p.nc = s.nc;
  p.kc = s.kc;
  p.nr = s.nr;
  p.kr = s.kr;
  p.sr = s.sr;
  p.padded_kc = PaddedKc(s);
  p.block_floats = s.nr * (1 + p.padded_kc) + s.extra_bytes / 4;
  p.blocks = (s.nc + s.nr - 1) / s.nr;
  p.clamp = Clamps(min, max);
  p.output_min = min;
  p.output_max = max;
  mmap_native::RunGemm(p, isa, threads, pool);
  return output;
}

// test/gemm-reference.ts firstMismatch: |a − b| ≤ 1e-5·(1 + |b|), NaN only matches NaN.
void ExpectClose(const char* what, const Shape& s, size_t batch, const std::vector<float>& got,
                 const std::vector<float>& want) {
  ++checks;
  for (size_t i = 0; i < want.size(); ++i) {
    const float a = got[i];
    const float b = want[i];
    const bool ok = std::isnan(b) ? std::isnan(a) : std::fabs(a - b) <= 1e-5f * (1 + std::fabs(b));
    if (!ok) Fail(what, s, batch, i, a, b);
  }
}

// Bit for bit: -0 and +0 differ, NaN equals NaN.
void ExpectSame(const char* what, const Shape& s, size_t batch, const std::vector<float>& got,
                const std::vector<float>& want) {
  ++checks;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                                        : std::memcmp(&got[i], &want[i], sizeof(float)) == 0;
    if (!ok) Fail(what, s, batch, i, got[i], want[i]);
  }
}

constexpr float kInf = INFINITY;

void Tilings() {
  // [nr, kr, sr]: XNNPACK's arm64 tilings (8/16 × 1 × 1, 8 × 1 × 4, 2 × 1 × 1), the x86
  // ones, and nr that fit no vector. kr or sr above 1 runs the portable kernel.
  const size_t tilings[][3] = {{8, 1, 1},  {16, 1, 1}, {8, 1, 4},  {2, 1, 1},  {32, 1, 1},
                               {16, 1, 4}, {2, 4, 1},  {4, 1, 1},  {1, 1, 1},  {5, 1, 1},
                               {12, 1, 1}, {24, 1, 1}, {48, 1, 1}, {64, 1, 1}, {4, 2, 2}};
  const size_t sizes[] = {1, 3, 17, 129};
  // Every remainder of the 6-row tile, a one-row tile after full ones, and two and three
  // tiles sharing the prefetch of the next block.
  const size_t batches[] = {1, 2, 3, 5, 6, 7, 11, 12, 13, 17, 19};
  for (const auto& t : tilings) {
    for (size_t nc : sizes) {
      for (size_t kc : sizes) {
        for (size_t extra : {size_t{0}, size_t{12}}) {
          const Shape s{nc, kc, t[0], t[1], t[2], extra};
          const auto kernel = Floats(nc * kc, static_cast<uint32_t>(nc * 131 + kc));
          const auto bias = Floats(nc, static_cast<uint32_t>(nc + 7));
          const auto packed = Pack(s, kernel, bias, NAN);
          for (size_t batch : batches) {
            const auto input = Floats(batch * kc, static_cast<uint32_t>(batch + kc));
            const auto want = Reference(s, kernel, bias, input, batch, -kInf, kInf);
            ExpectClose("neon", s, batch,
                        Run(s, packed, input, batch, GemmIsa::kNeon, 1, nullptr, -kInf, kInf),
                        want);
            ExpectClose("portable", s, batch,
                        Run(s, packed, input, batch, GemmIsa::kPortable, 1, nullptr, -kInf,
                            kInf),
                        want);
          }
        }
      }
    }
  }
}

void Threads() {
  mmap_native::ThreadPool pool;
  const size_t shapes[][3] = {{129, 257, 16}, {300, 200, 8}, {64, 512, 8}};
  for (const auto& shape : shapes) {
    const Shape s{shape[0], shape[1], shape[2], 1, 1, 0};
    const auto kernel = Floats(s.nc * s.kc, 3);
    const auto bias = Floats(s.nc, 4);
    const auto packed = Pack(s, kernel, bias, NAN);
    for (size_t batch : {size_t{1}, size_t{5}, size_t{13}, size_t{64}, size_t{70}}) {
      const auto input = Floats(batch * s.kc, static_cast<uint32_t>(batch));
      const auto want = Reference(s, kernel, bias, input, batch, -0.75f, 0.75f);
      const auto single = Run(s, packed, input, batch, GemmIsa::kNeon, 1, nullptr, -0.75f, 0.75f);
      ExpectClose("neon, clamped", s, batch, single, want);
      for (size_t threads : {size_t{2}, size_t{3}}) {
        // Each output is summed by one thread in one order: splitting changes no bit.
        ExpectSame("neon, threads", s, batch,
                   Run(s, packed, input, batch, GemmIsa::kNeon, threads, &pool, -0.75f, 0.75f),
                   single);
      }
    }
  }
}

// kc = 1, weights 0, input -1: each output is its bias + (-0), exactly. Clamped by the rules
// of clampOutputs: NaN becomes min, a value equal to a bound keeps its own sign of zero.
void Clamping() {
  const float special[] = {NAN, -0.0f, 0.0f, -1, 1, 0.5f, -3, kInf};
  const size_t nc = sizeof(special) / sizeof(special[0]);
  const float bounds[][2] = {{-kInf, kInf}, {0, kInf},   {-0.0f, 0},    {0, -0.0f},
                             {-0.0f, -0.0f}, {-kInf, 0.5f}, {-1, 1},   {0.5f, 0.5f},
                             {-kInf, 3},    {-2, kInf},  {0.1f, 0.30000001f}};
  for (const auto& b : bounds) {
    for (size_t nr : {size_t{1}, size_t{4}, size_t{8}, size_t{16}, size_t{32}}) {
      const Shape s{nc, 1, nr, 1, 1, 0};
      const std::vector<float> kernel(nc, 0.0f);
      const std::vector<float> bias(special, special + nc);
      const auto packed = Pack(s, kernel, bias, NAN);
      const std::vector<float> input{-1.0f};
      const auto want = Reference(s, kernel, bias, input, 1, b[0], b[1]);
      ExpectSame("neon, clamp rules", s, 1,
                 Run(s, packed, input, 1, GemmIsa::kNeon, 1, nullptr, b[0], b[1]), want);
    }
  }
}

uint32_t BitwiseCrc32c(uint32_t previous, const uint8_t* data, size_t length) {
  uint32_t crc = ~previous;
  for (size_t i = 0; i < length; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void ExpectCrc(const char* what, uint32_t got, uint32_t want) {
  ++checks;
  if (got != want) {
    std::printf("arm64 crc32c: %s: 0x%08x, expected 0x%08x\n", what, got, want);
    std::exit(1);
  }
}

void Crc32c() {
  if (std::strcmp(mmap_native::Crc32cImplementation(), "armv8-crc32") != 0) {
    std::printf("arm64 crc32c: implementation %s, expected armv8-crc32\n",
                mmap_native::Crc32cImplementation());
    std::exit(1);
  }
  // RFC 3720 B.4, and the check value of "123456789".
  uint8_t bytes[32];
  std::memset(bytes, 0, sizeof(bytes));
  ExpectCrc("32 zeros", mmap_native::Crc32c(0, bytes, 32), 0x8a9136aa);
  std::memset(bytes, 0xff, sizeof(bytes));
  ExpectCrc("32 0xff", mmap_native::Crc32c(0, bytes, 32), 0x62a8ab43);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(i);
  ExpectCrc("ascending", mmap_native::Crc32c(0, bytes, 32), 0x46dd794e);
  const char* digits = "123456789";
  ExpectCrc("123456789",
            mmap_native::Crc32c(0, reinterpret_cast<const uint8_t*>(digits), 9), 0xe3069283);
  // Every length to 70 at every offset to 8 (the 8-byte loop, its byte tail, unaligned
  // words), and continued from a previous CRC in two parts.
  const auto noise = Floats(200, 99);
  const auto* data = reinterpret_cast<const uint8_t*>(noise.data());
  for (size_t offset = 0; offset <= 8; ++offset) {
    for (size_t length = 0; length <= 70; ++length) {
      const uint8_t* p = data + offset;
      const uint32_t want = BitwiseCrc32c(0, p, length);
      ExpectCrc("whole", mmap_native::Crc32c(0, p, length), want);
      const size_t cut = length / 3;
      const uint32_t first = mmap_native::Crc32c(0, p, cut);
      ExpectCrc("continued", mmap_native::Crc32c(first, p + cut, length - cut), want);
    }
  }
}

}  // namespace

int main() {
  if (!mmap_native::GemmIsaSupported(GemmIsa::kNeon) ||
      mmap_native::BestGemmIsa() != GemmIsa::kNeon) {
    std::printf("arm64 gemm: NEON is not the widest instruction set reported\n");
    return 1;
  }
  Tilings();
  Threads();
  Clamping();
  std::printf("arm64 gemm: %zu checks passed (neon against the float64 oracle)\n", checks);
  checks = 0;
  Crc32c();
  std::printf("arm64 crc32c: %zu checks passed (armv8-crc32 against a bitwise CRC)\n", checks);
  return 0;
}
