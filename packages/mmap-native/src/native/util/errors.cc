#include "errors.h"

#include <cstring>

#include "addon_data.h"

namespace mmap_native {

namespace {

void ThrowWithDetails(Napi::Env env, Napi::Value message, Napi::Object details,
                      const std::string& fallback_message) {
  AddonData* data = GetAddonData(env);
  if (data != nullptr && !data->error_constructor.IsEmpty()) {
    Napi::Object error = data->error_constructor.New({message, details});
    if (env.IsExceptionPending()) return;  // the constructor itself threw
    Napi::Error(env, error).ThrowAsJavaScriptException();
    return;
  }
  Napi::Error error = Napi::Error::New(env, fallback_message);
  Napi::Object object = error.Value();
  for (const char* key : {"code", "errno", "syscall", "path"}) {
    if (details.Has(key)) object.Set(key, details.Get(key));
  }
  error.ThrowAsJavaScriptException();
}

}  // namespace

void ThrowSystemError(Napi::Env env, int err, const char* syscall, const std::string& path) {
  Napi::Object details = Napi::Object::New(env);
  details.Set("errno", Napi::Number::New(env, err));
  details.Set("syscall", Napi::String::New(env, syscall));
  if (!path.empty()) details.Set("path", Napi::String::New(env, path));
  std::string fallback = std::string(std::strerror(err)) + ", " + syscall;
  if (!path.empty()) fallback += " '" + path + "'";
  ThrowWithDetails(env, env.Undefined(), details, fallback);
}

void ThrowCodeError(Napi::Env env, const char* code, const std::string& message,
                    const char* syscall, const std::string& path) {
  Napi::Object details = Napi::Object::New(env);
  details.Set("code", Napi::String::New(env, code));
  details.Set("syscall", Napi::String::New(env, syscall));
  if (!path.empty()) details.Set("path", Napi::String::New(env, path));
  ThrowWithDetails(env, Napi::String::New(env, message), details, message);
}

void ThrowTypeError(Napi::Env env, const std::string& message, const char* code) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  error.ThrowAsJavaScriptException();
}

void ThrowRangeError(Napi::Env env, const std::string& message, const char* code) {
  Napi::RangeError error = Napi::RangeError::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  error.ThrowAsJavaScriptException();
}

}  // namespace mmap_native
