// Entry point of mmap_native.node. Platform code lives in posix/ or windows/.
#include <napi.h>

#include "kernels/gemm-binding.h"
#include "platform.h"
#include "util/addon_data.h"
#include "util/crc32c-binding.h"
#include "util/errors.h"
#include "xnn-graph/xnn-graph-binding.h"

namespace mmap_native {

namespace {

// configure(MmapError): the error class is defined in TypeScript and handed over here so
// errors thrown from C++ are real instances of it (as better-sqlite3 does with SqliteError).
Napi::Value Configure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsFunction()) {
    ThrowTypeError(env, "Expected a constructor for errorConstructor");
    return env.Undefined();
  }
  GetAddonData(env)->error_constructor = Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  env.SetInstanceData<AddonData>(data);  // deleted by node-addon-api at environment teardown
  exports.Set("configure", Napi::Function::New<Configure>(env, "configure"));
  InitPlatform(env, exports, data);
  InitCrc32c(env, exports);
  InitGemmKernels(env, exports);
  InitXnnGraph(env, exports);
  return exports;
}

}  // namespace

}  // namespace mmap_native

// NODE_API_MODULE pastes the function name into an identifier, so it must be unqualified.
static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  return mmap_native::Init(env, exports);
}

NODE_API_MODULE(mmap_native, InitAddon)
