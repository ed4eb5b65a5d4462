// Windows has no mmap/flock: the addon reports itself unsupported and the TypeScript
// layer uses the heap backend.
#include "../platform.h"

namespace mmap_native {

void InitPlatform(Napi::Env env, Napi::Object exports, AddonData* /*data*/) {
  exports.Set("supported", Napi::Boolean::New(env, false));
}

}  // namespace mmap_native
