#include "gemm-portable.h"

#include <algorithm>

namespace mmap_native {

namespace {

// Rows computed together: each weight load feeds this many products.
constexpr size_t kRows = 4;

// One output channel o of a block for `rows` input rows from x (kc floats apart).
void Channel(const GemmProblem& p, const float* block, size_t o, const float* x, size_t rows,
             float* y) {
  double acc[kRows];
  for (size_t i = 0; i < rows; ++i) acc[i] = block[o];
  // Floats between consecutive kr-steps of the same row: one slot per row of the block.
  const size_t step = p.nr * p.kr;
  const float* w = block + p.nr + o * p.kr;
  for (size_t t = 0; t < p.padded_kc; t += p.kr, w += step) {
    const size_t col = PackedColumn(t, o, p.kr, p.sr);
    for (size_t j = 0; j < p.kr; ++j) {
      const double wv = w[j];
      const size_t c = col + j;
      // A float times a float is exact in a double: with or without FMA contraction
      // the sum is the same.
      if (c < p.kc) {
        for (size_t i = 0; i < rows; ++i) acc[i] += wv * x[i * p.kc + c];
      } else {
        for (size_t i = 0; i < rows; ++i) acc[i] += wv * 0.0;
      }
    }
  }
  for (size_t i = 0; i < rows; ++i) {
    const float v = static_cast<float>(acc[i]);
    y[i * p.nc] = p.clamp ? ClampOutput(v, p.output_min, p.output_max) : v;
  }
}

}  // namespace

void GemmPortable(const GemmProblem& p, size_t block_begin, size_t block_end, size_t row_begin,
                  size_t row_end) {
  for (size_t b = block_begin; b < block_end; ++b) {
    const float* block = p.packed + b * p.block_floats;
    const size_t n0 = b * p.nr;
    const size_t real = std::min(p.nr, p.nc - n0);  // rows past nc are padding
    for (size_t r = row_begin; r < row_end; r += kRows) {
      const size_t rows = std::min(kRows, row_end - r);
      const float* x = p.input + r * p.kc;
      float* y = p.output + r * p.nc + n0;
      for (size_t o = 0; o < real; ++o) Channel(p, block, o, x, rows, y + o);
    }
  }
}

}  // namespace mmap_native
