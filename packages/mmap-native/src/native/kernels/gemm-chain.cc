#include "gemm-chain.h"

#include <algorithm>
#include <limits>
#include <new>
#include <utility>

#include "gemm-binding.h"

namespace mmap_native {

GemmChain::GemmChain(std::vector<GemmPlan> plans) : plans_(std::move(plans)) {
  for (size_t i = 0; i + 1 < plans_.size(); ++i) widest_ = std::max(widest_, plans_[i].nc);
}

bool GemmChain::Reserve(size_t batch) {
  if (batch <= rows_ || widest_ == 0) return true;
  // Two halves of batch · widest floats each (ping-pong between layers).
  if (batch > std::numeric_limits<size_t>::max() / sizeof(float) / 2 / widest_) return false;
  std::unique_ptr<float[]> grown(new (std::nothrow) float[2 * batch * widest_]);
  if (!grown) return false;
  scratch_ = std::move(grown);
  rows_ = batch;
  return true;
}

void GemmChain::Run(Napi::Env env, const float* const* packed, const float* input,
                    float* output, size_t batch) {
  float* halves[2] = {scratch_.get(), scratch_.get() + rows_ * widest_};
  const float* x = input;
  const size_t last = plans_.size() - 1;
  for (size_t i = 0; i <= last; ++i) {
    float* y = i == last ? output : halves[i % 2];
    RunGemmPlan(env, plans_[i], GemmProblemOf(plans_[i], packed[i], x, y, batch));
    x = y;
  }
}

}  // namespace mmap_native
