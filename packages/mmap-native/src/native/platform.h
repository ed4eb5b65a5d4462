#ifndef MMAP_NATIVE_PLATFORM_H
#define MMAP_NATIVE_PLATFORM_H

#include <napi.h>

#include "util/addon_data.h"

namespace mmap_native {

// Implemented once per platform folder (posix/, windows/), chosen by binding.gyp.
void InitPlatform(Napi::Env env, Napi::Object exports, AddonData* data);

}  // namespace mmap_native

#endif
