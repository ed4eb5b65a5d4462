// POSIX platform entry: registers the File/Mapping classes and the plain functions.
#include <errno.h>

#include "../objects/background-write.h"
#include "../objects/file.h"
#include "../objects/mapping.h"
#include "../platform.h"
#include "../util/addon_data.h"
#include "../util/args.h"
#include "../util/errors.h"
#include "prefault.h"
#include "sys.h"

namespace mmap_native {

namespace {

Napi::Value PageSize(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(sys::PageSize()));
}

// flock() on a descriptor the caller owns (the heap backend's fs descriptor).
Napi::Value LockDescriptor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd = -1;
  int32_t kind = 0;
  bool wait = false;
  std::string path;
  if (!ReadInt32(env, info[0], "fd", &fd)) return env.Undefined();
  if (!ReadInt32(env, info[1], "kind", &kind)) return env.Undefined();
  if (!ReadBool(env, info[2], "wait", &wait)) return env.Undefined();
  if (info[3].IsString()) path = info[3].As<Napi::String>().Utf8Value();
  if (int err = sys::Lock(fd, kind, wait)) ThrowSystemError(env, err, "flock", path);
  return env.Undefined();
}

Napi::Value LiveMappings(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(sys::LiveMappings()));
}

// Whether this runtime lets addons create external ArrayBuffers (Electron's V8 memory
// cage does not); without them only the heap backend can work.
Napi::Value ExternalBuffersAllowed(const Napi::CallbackInfo& info) {
  static uint8_t probe[1];
  napi_value result = nullptr;
  napi_status status =
      napi_create_external_arraybuffer(info.Env(), probe, sizeof(probe), nullptr, nullptr, &result);
  return Napi::Boolean::New(info.Env(), status == napi_ok);
}

}  // namespace

void InitPlatform(Napi::Env env, Napi::Object exports, AddonData* data) {
  Napi::Function file = File::DefineClass(env);
  data->file_constructor = Napi::Persistent(file);
  data->mapping_constructor = Napi::Persistent(Mapping::DefineClass(env));
  data->background_write_constructor = Napi::Persistent(BackgroundWrite::DefineClass(env));
  exports.Set("supported", Napi::Boolean::New(env, true));
  exports.Set("File", file);
  exports.Set("pageSize", Napi::Function::New<PageSize>(env, "pageSize"));
  exports.Set("lockDescriptor", Napi::Function::New<LockDescriptor>(env, "lockDescriptor"));
  exports.Set("prefault", Napi::Function::New<Prefault>(env, "prefault"));
  exports.Set("liveMappings", Napi::Function::New<LiveMappings>(env, "liveMappings"));
  exports.Set("externalBuffersAllowed",
              Napi::Function::New<ExternalBuffersAllowed>(env, "externalBuffersAllowed"));
}

}  // namespace mmap_native
