// prefault(buffer): an ArrayBuffer's pages faulted in writable on the thread pool.
#ifndef MMAP_NATIVE_POSIX_PREFAULT_H
#define MMAP_NATIVE_POSIX_PREFAULT_H

#include <napi.h>

namespace mmap_native {

Napi::Value Prefault(const Napi::CallbackInfo& info);

}  // namespace mmap_native

#endif
