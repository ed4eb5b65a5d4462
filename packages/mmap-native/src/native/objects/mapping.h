// One mmap'd range exposed to JavaScript as an external ArrayBuffer.
//
// Lifetime: unmap() detaches the ArrayBuffer (every view sees byteLength 0) and then
// munmaps. The ArrayBuffer's finalizer is only a safety net for mappings dropped without
// unmap(); both paths share one Region and its `unmapped` flag, so the range is unmapped
// exactly once whichever runs first.
#ifndef MMAP_NATIVE_OBJECTS_MAPPING_H
#define MMAP_NATIVE_OBJECTS_MAPPING_H

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>

namespace mmap_native {

struct Region {
  uint8_t* base = nullptr;   // page-aligned address returned by mmap
  size_t mapped_length = 0;  // length given to mmap
  bool unmapped = false;     // only touched on the JS thread
};

class Mapping : public Napi::ObjectWrap<Mapping> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  explicit Mapping(const Napi::CallbackInfo& info);

  // Wraps a fresh mmap result. Takes ownership of [base, base + mapped_length): it is
  // unmapped again when creating the ArrayBuffer fails. The view starts `delta` bytes in.
  static Napi::Value Create(Napi::Env env, void* base, size_t mapped_length, size_t delta,
                            size_t length, const std::string& path);

 private:
  Napi::Value GetBuffer(const Napi::CallbackInfo& info);
  Napi::Value GetAddress(const Napi::CallbackInfo& info);
  Napi::Value Sync(const Napi::CallbackInfo& info);
  Napi::Value Advise(const Napi::CallbackInfo& info);
  Napi::Value Residency(const Napi::CallbackInfo& info);
  Napi::Value Unmap(const Napi::CallbackInfo& info);

  // Resolves (offset, length) inside the view to a page-aligned [start, start + size).
  bool ResolveRange(Napi::Env env, Napi::Value offset_value, Napi::Value length_value,
                    const char* syscall, uint8_t** start, size_t* size);

  std::shared_ptr<Region> region_;
  size_t delta_ = 0;
  size_t length_ = 0;
  Napi::Reference<Napi::ArrayBuffer> buffer_;
  std::string path_;
};

}  // namespace mmap_native

#endif
