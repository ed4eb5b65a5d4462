// The checks of the GEMM functions' arguments, split in two: what a layer keeps from call
// to call (its layout, bounds, threads and instruction set: a GemmPlan, read once by
// gemmF32Plan) and what each call brings (the buffers and the batch, read into a
// GemmProblem against a plan). gemmF32 reads both at every call.
//
// Every check is here, whatever src/kernels/ checked before: no argument, however hostile,
// makes a kernel read or write outside the buffers it was given.
#ifndef MMAP_NATIVE_KERNELS_GEMM_ARGS_H
#define MMAP_NATIVE_KERNELS_GEMM_ARGS_H

#include <napi.h>

#include <cstddef>

#include "cpu-isa.h"
#include "gemm-problem.h"

namespace mmap_native {

struct GemmPlan {
  size_t nc;
  size_t kc;
  size_t nr;
  size_t kr;
  size_t sr;
  size_t padded_kc;
  size_t block_floats;
  size_t blocks;
  size_t packed_bytes;  // blocks · block_floats · 4, which fits in size_t
  bool clamp;
  float output_min;
  float output_max;
  size_t threads;
  GemmIsa isa;
};

// Reads nc, kc, nr, kr, sr, extraBytes, outputMin, outputMax, threads, isa from
// info[first] on. False with a JavaScript exception pending when one is refused.
bool ReadGemmPlan(const Napi::CallbackInfo& info, size_t first, GemmPlan* plan);

// Reads the weights (a Uint8Array or ArrayBuffer), input and output (Float32Arrays) and
// batch of one call and checks them against `plan`: sizes, alignment, no overlap of the
// output with the input or the weights. False with a JavaScript exception pending.
bool ReadGemmCall(Napi::Env env, const GemmPlan& plan, Napi::Value packed, Napi::Value input,
                  Napi::Value output, Napi::Value batch, GemmProblem* problem);

// The parts of ReadGemmCall, for calls that run several plans (gemm-chain-binding.cc).
// Messages name the weights of `layer` ("packed weights of layer 3"), or just "packed
// weights" for kNoLayer. A detached buffer (its mapping closed) reads as 0 bytes, so it
// is refused here.
constexpr size_t kNoLayer = static_cast<size_t>(-1);
bool ReadGemmPacked(Napi::Env env, const GemmPlan& plan, Napi::Value packed, size_t layer,
                    const float** out);

// The input [batch][kc] and output [batch][nc] of one call, which may not overlap.
struct GemmIo {
  const float* input;
  float* output;
  size_t batch;
};
bool ReadGemmIo(Napi::Env env, size_t kc, size_t nc, Napi::Value input, Napi::Value output,
                Napi::Value batch, GemmIo* io);

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool BytesOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes);

// The problem of running `plan` over checked buffers.
GemmProblem GemmProblemOf(const GemmPlan& plan, const float* packed, const float* input,
                          float* output, size_t batch);

}  // namespace mmap_native

#endif
