#include "errors.h"

#include <cstring>

#include "addon_data.h"

namespace mmap_native {

namespace {

// Empty when the registered constructor threw (its exception is pending).
Napi::Value MakeWithDetails(Napi::Env env, Napi::Value message, Napi::Object details,
                            const std::string& fallback_message) {
  AddonData* data = GetAddonData(env);
  if (data != nullptr && !data->error_constructor.IsEmpty()) {
    Napi::Object error = data->error_constructor.New({message, details});
    if (env.IsExceptionPending()) return Napi::Value();
    return error;
  }
  Napi::Error error = Napi::Error::New(env, fallback_message);
  Napi::Object object = error.Value();
  for (const char* key : {"code", "errno", "syscall", "path"}) {
    if (details.Has(key)) object.Set(key, details.Get(key));
  }
  return object;
}

void ThrowWithDetails(Napi::Env env, Napi::Value message, Napi::Object details,
                      const std::string& fallback_message) {
  Napi::Value error = MakeWithDetails(env, message, details, fallback_message);
  if (error.IsEmpty()) return;  // the constructor itself threw
  Napi::Error(env, error).ThrowAsJavaScriptException();
}

}  // namespace

Napi::Value SystemError(Napi::Env env, int err, const char* syscall, const std::string& path) {
  Napi::Object details = Napi::Object::New(env);
  details.Set("errno", Napi::Number::New(env, err));
  details.Set("syscall", Napi::String::New(env, syscall));
  if (!path.empty()) details.Set("path", Napi::String::New(env, path));
  std::string fallback = std::string(std::strerror(err)) + ", " + syscall;
  if (!path.empty()) fallback += " '" + path + "'";
  return MakeWithDetails(env, env.Undefined(), details, fallback);
}

void ThrowSystemError(Napi::Env env, int err, const char* syscall, const std::string& path) {
  Napi::Value error = SystemError(env, err, syscall, path);
  if (error.IsEmpty()) return;  // the constructor itself threw
  Napi::Error(env, error).ThrowAsJavaScriptException();
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
