// A chain of GEMM plans run one after another in one call, layer i's output being layer
// i+1's input, as XNNPACK's runtime runs a graph: the intermediates live in scratch the
// chain owns, grown to the largest batch run, so a run allocates nothing per layer. Each
// layer keeps its own plan (tiling, bias, bounds, threads, instruction set) and runs
// exactly as gemmF32Run would run it, so the outputs are the same bits.
#ifndef MMAP_NATIVE_KERNELS_GEMM_CHAIN_H
#define MMAP_NATIVE_KERNELS_GEMM_CHAIN_H

#include <napi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "gemm-args.h"

namespace mmap_native {

class GemmChain {
 public:
  // `plans` must not be empty and must chain: plans[i + 1].kc == plans[i].nc.
  explicit GemmChain(std::vector<GemmPlan> plans);

  const std::vector<GemmPlan>& plans() const { return plans_; }
  size_t kc() const { return plans_.front().kc; }
  size_t nc() const { return plans_.back().nc; }

  // Makes room for `batch` rows of intermediates; false when they would not fit in memory.
  bool Reserve(size_t batch);

  // input [batch][kc] → output [batch][nc], layer i reading packed[i]; every buffer checked
  // by the caller, and Reserve(batch) done.
  void Run(Napi::Env env, const float* const* packed, const float* input, float* output,
           size_t batch);

 private:
  std::vector<GemmPlan> plans_;
  size_t widest_ = 0;  // floats per row of an intermediate: the widest nc but the last
  size_t rows_ = 0;    // rows each half of scratch_ holds
  std::unique_ptr<float[]> scratch_;
};

}  // namespace mmap_native

#endif
