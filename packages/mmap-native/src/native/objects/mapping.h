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
#include <atomic>
#include <string>

namespace mmap_native {

struct Region {
  uint8_t* base = nullptr;   // page-aligned address returned by mmap
  size_t mapped_length = 0;  // length given to mmap
  bool unmapped = false;     // only touched on the JS thread
  size_t uncounted_bytes = 0;  // taken off V8's external memory count (JS thread only)
  std::atomic<int> references{1};
};

// A counted reference to a Region, shared by the Mapping object and the ArrayBuffer's
// finalizer. (std::shared_ptr would do, but libstdc++'s reference counting calls
// __libc_single_threaded, a glibc 2.32 symbol; the prebuilt addon must load on 2.28.)
class RegionRef {
 public:
  RegionRef() = default;
  // Adopts the reference a new Region starts with.
  explicit RegionRef(Region* region) : region_(region) {}
  RegionRef(RegionRef&& other) noexcept : region_(other.region_) { other.region_ = nullptr; }
  RegionRef& operator=(RegionRef&& other) noexcept {
    if (this != &other) {
      reset();
      region_ = other.region_;
      other.region_ = nullptr;
    }
    return *this;
  }
  RegionRef(const RegionRef&) = delete;
  RegionRef& operator=(const RegionRef&) = delete;
  ~RegionRef() { reset(); }

  RegionRef Share() const {
    region_->references.fetch_add(1, std::memory_order_relaxed);
    return RegionRef(region_);
  }
  void reset() {
    if (region_ != nullptr && region_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete region_;
    }
    region_ = nullptr;
  }
  Region* operator->() const { return region_; }
  Region& operator*() const { return *region_; }
  explicit operator bool() const { return region_ != nullptr; }

 private:
  Region* region_ = nullptr;
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

  RegionRef region_;
  size_t delta_ = 0;
  size_t length_ = 0;
  Napi::Reference<Napi::ArrayBuffer> buffer_;
  std::string path_;
};

}  // namespace mmap_native

#endif
