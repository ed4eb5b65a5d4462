// gemmF32Chain(plans, packed): a GemmChain (gemm-chain.h) of gemmF32Plan plans, layer i
// reading packed[i] (a Uint8Array or an ArrayBuffer), as an object that holds the plans,
// the weights' views and the scratch, all freed when it is collected.
// gemmF32ChainRun(chain, input, output, batch): runs every layer in one call.
//
// The weights are views of mapped windows that may be unmapped after the chain is made
// (Mapping.close() detaches their ArrayBuffers): every run checks every view again, as
// gemmF32Run checks its one, so a closed window is a RangeError, never a read of unmapped
// memory.
#ifndef MMAP_NATIVE_KERNELS_GEMM_CHAIN_BINDING_H
#define MMAP_NATIVE_KERNELS_GEMM_CHAIN_BINDING_H

#include <napi.h>

namespace mmap_native {

void InitGemmChain(Napi::Env env, Napi::Object exports);

}  // namespace mmap_native

#endif
