// Per-environment state (one per main thread / worker), so the addon is worker-safe.
#ifndef MMAP_NATIVE_UTIL_ADDON_DATA_H
#define MMAP_NATIVE_UTIL_ADDON_DATA_H

#include <napi.h>

namespace mmap_native {

struct AddonData {
  // MmapError, defined in TypeScript and handed over by setErrorConstructor().
  Napi::FunctionReference error_constructor;
  Napi::FunctionReference file_constructor;
  Napi::FunctionReference mapping_constructor;
  Napi::FunctionReference background_write_constructor;
};

inline AddonData* GetAddonData(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

}  // namespace mmap_native

#endif
