#include "mapping.h"

#include <errno.h>

#include <vector>

#include "../posix/sys.h"
#include "../util/addon_data.h"
#include "../util/args.h"
#include "../util/errors.h"

namespace mmap_native {

namespace {

// V8 counts an ArrayBuffer's length as external memory and starts a full garbage collection
// each time that count grows 64 MiB past its low mark, so every 64 MiB mapped used to start
// one. Mapped pages are page cache the kernel reclaims (or freed by unmap), not memory a
// collection gives back: each mapping's length is taken off the count just before V8 adds
// it (afterwards is too late, V8 checks as it adds) and given back once V8 has taken it off
// again (detach at unmap, or the buffer freed). The net count of a mapping is zero; V8's
// low mark still lets this spare only mappings under 64 MiB a collection.
void UncountMapping(napi_env env, Region& region, size_t length) {
  int64_t total = 0;
  if (napi_adjust_external_memory(env, -static_cast<int64_t>(length), &total) == napi_ok) {
    region.uncounted_bytes = length;
  }
}

void RecountMapping(napi_env env, Region& region) {
  if (region.uncounted_bytes == 0) return;
  int64_t total = 0;
  napi_adjust_external_memory(env, static_cast<int64_t>(region.uncounted_bytes), &total);
  region.uncounted_bytes = 0;
}

// Finalizer of the external ArrayBuffer: runs on the JS thread once V8 has freed the
// backing store (the mapping was dropped without unmap(), or after unmap() detached it).
void FinalizeRegion(napi_env env, void* /*data*/, void* hint) {
  auto* holder = static_cast<RegionRef*>(hint);
  Region& region = **holder;
  RecountMapping(env, region);
  if (!region.unmapped) {
    region.unmapped = true;
    sys::Unmap(region.base, region.mapped_length);
  }
  delete holder;
}

}  // namespace

Napi::Function Mapping::DefineClass(Napi::Env env) {
  return ObjectWrap<Mapping>::DefineClass(
      env, "NativeMapping",
      {
          InstanceAccessor<&Mapping::GetBuffer>("buffer"),
          InstanceAccessor<&Mapping::GetAddress>("address"),
          InstanceMethod<&Mapping::Sync>("sync"),
          InstanceMethod<&Mapping::Advise>("advise"),
          InstanceMethod<&Mapping::Residency>("residency"),
          InstanceMethod<&Mapping::Unmap>("unmap"),
      });
}

Mapping::Mapping(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Mapping>(info) {}

Napi::Value Mapping::Create(Napi::Env env, void* base, size_t mapped_length, size_t delta,
                            size_t length, const std::string& path) {
  RegionRef region(new Region());
  region->base = static_cast<uint8_t*>(base);
  region->mapped_length = mapped_length;

  auto* holder = new RegionRef(region.Share());
  napi_value raw_buffer = nullptr;
  UncountMapping(env, *region, length);
  napi_status status = napi_create_external_arraybuffer(
      env, region->base + delta, length, FinalizeRegion, holder, &raw_buffer);
  if (status != napi_ok) {
    RecountMapping(env, *region);
    if (status == napi_no_external_buffers_allowed) {
      // Nothing was created, so the finalizer will never run.
      delete holder;
      sys::Unmap(base, mapped_length);
      ThrowCodeError(env, "ERR_MMAP_EXTERNAL_BUFFERS_NOT_ALLOWED",
                     "this runtime does not allow external ArrayBuffers (use the heap backend)",
                     "mmap", path);
      return env.Undefined();
    }
    // Whether the finalizer already ran or will run later is not specified for other
    // failures: unmap now and leave `holder` to it, which then only frees the holder.
    if (!region->unmapped) {
      region->unmapped = true;
      sys::Unmap(base, mapped_length);
    }
    if (!env.IsExceptionPending()) {
      ThrowCodeError(env, "ERR_MMAP_BUFFER", "could not create an ArrayBuffer for the mapping",
                     "mmap", path);
    }
    return env.Undefined();
  }

  Napi::Object object = GetAddonData(env)->mapping_constructor.New({});
  if (env.IsExceptionPending()) return env.Undefined();
  Mapping* mapping = Mapping::Unwrap(object);
  mapping->region_ = std::move(region);
  mapping->delta_ = delta;
  mapping->length_ = length;
  mapping->path_ = path;
  mapping->buffer_ = Napi::Persistent(Napi::Value(env, raw_buffer).As<Napi::ArrayBuffer>());
  return object;
}

Napi::Value Mapping::GetBuffer(const Napi::CallbackInfo& info) {
  if (buffer_.IsEmpty()) return info.Env().Undefined();
  return buffer_.Value();
}

Napi::Value Mapping::GetAddress(const Napi::CallbackInfo& info) {
  if (!region_) return info.Env().Null();
  return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(
                                           reinterpret_cast<uintptr_t>(region_->base)));
}

bool Mapping::ResolveRange(Napi::Env env, Napi::Value offset_value, Napi::Value length_value,
                           const char* syscall, uint8_t** start, size_t* size) {
  if (!region_ || region_->unmapped) {
    ThrowCodeError(env, "ERR_MMAP_CLOSED", "the mapping is closed", syscall, path_);
    return false;
  }
  uint64_t offset = 0;
  uint64_t length = 0;
  if (!ReadUint64(env, offset_value, "offset", &offset)) return false;
  if (!ReadUint64(env, length_value, "length", &length)) return false;
  if (offset > length_ || length > length_ - offset) {
    ThrowRangeError(env, "Expected a range inside the mapping for offset and length");
    return false;
  }
  // msync/madvise/mincore need a page-aligned start: round down (the view may begin
  // mid-page, and rounding only widens the range to whole pages of this mapping).
  if (length == 0) {
    *start = region_->base;
    *size = 0;
    return true;
  }
  const size_t page = sys::PageSize();
  const size_t begin = delta_ + static_cast<size_t>(offset);
  const size_t aligned = begin - begin % page;
  *start = region_->base + aligned;
  *size = begin + static_cast<size_t>(length) - aligned;
  return true;
}

Napi::Value Mapping::Sync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* start = nullptr;
  size_t size = 0;
  if (!ResolveRange(env, info[0], info[1], "msync", &start, &size)) return env.Undefined();
  int32_t mode = 0;
  if (!ReadInt32(env, info[2], "mode", &mode)) return env.Undefined();
  if (size == 0) return env.Undefined();
  if (int err = sys::SyncRange(start, size, mode)) ThrowSystemError(env, err, "msync", path_);
  return env.Undefined();
}

Napi::Value Mapping::Advise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* start = nullptr;
  size_t size = 0;
  if (!ResolveRange(env, info[0], info[1], "madvise", &start, &size)) return env.Undefined();
  int32_t advice = 0;
  if (!ReadInt32(env, info[2], "advice", &advice)) return env.Undefined();
  if (size == 0) return env.Undefined();
  if (int err = sys::AdviseRange(start, size, advice)) {
    ThrowSystemError(env, err, "madvise", path_);
  }
  return env.Undefined();
}

Napi::Value Mapping::Residency(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* start = nullptr;
  size_t size = 0;
  if (!ResolveRange(env, info[0], info[1], "mincore", &start, &size)) return env.Undefined();
  bool want_pages = false;
  if (!ReadBool(env, info[2], "pages", &want_pages)) return env.Undefined();
  const size_t page = sys::PageSize();
  const size_t count = (size + page - 1) / page;
  std::vector<unsigned char> vec(count == 0 ? 1 : count);
  if (count > 0) {
    if (int err = sys::Residency(start, size, vec.data())) {
      ThrowSystemError(env, err, "mincore", path_);
      return env.Undefined();
    }
  }
  size_t resident = 0;
  for (size_t i = 0; i < count; i++) {
    vec[i] &= 1;  // the other bits are reserved / platform-specific
    resident += vec[i];
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("resident", Napi::Number::New(env, static_cast<double>(resident)));
  result.Set("total", Napi::Number::New(env, static_cast<double>(count)));
  if (want_pages) {
    Napi::Uint8Array pages = Napi::Uint8Array::New(env, count);
    for (size_t i = 0; i < count; i++) pages[i] = vec[i];
    result.Set("pages", pages);
  }
  return result;
}

Napi::Value Mapping::Unmap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!region_ || region_->unmapped) return env.Undefined();  // second close: no-op
  Napi::ArrayBuffer buffer = buffer_.Value();
  bool detached = false;
  napi_status status = napi_is_detached_arraybuffer(env, buffer, &detached);
  if (status == napi_ok && detached) {
    // Someone transferred the ArrayBuffer away: the new owner still uses the memory, so
    // leave the unmapping to the finalizer, which runs once that owner is collected.
    region_.reset();
    return env.Undefined();
  }
  // Detach first so no JavaScript can observe the range after it is gone.
  status = napi_detach_arraybuffer(env, buffer);
  if (status != napi_ok) {
    if (!env.IsExceptionPending()) {
      ThrowCodeError(env, "ERR_MMAP_DETACH", "could not detach the mapping's ArrayBuffer",
                     "munmap", path_);
    }
    return env.Undefined();
  }
  RecountMapping(env, *region_);
  region_->unmapped = true;
  int err = sys::Unmap(region_->base, region_->mapped_length);
  region_.reset();
  if (err != 0) ThrowSystemError(env, err, "munmap", path_);
  return env.Undefined();
}

}  // namespace mmap_native
