// An open file descriptor that mappings are created from. The fd is closed by close() or,
// as a safety net, when the object is garbage collected.
#ifndef MMAP_NATIVE_OBJECTS_FILE_H
#define MMAP_NATIVE_OBJECTS_FILE_H

#include <napi.h>

#include <cstdint>
#include <string>

namespace mmap_native {

class File : public Napi::ObjectWrap<File> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  // new File(path, mode, permissions, followSymlinks)
  explicit File(const Napi::CallbackInfo& info);
  ~File() override;

 private:
  Napi::Value GetFd(const Napi::CallbackInfo& info);
  Napi::Value Size(const Napi::CallbackInfo& info);
  Napi::Value Grow(const Napi::CallbackInfo& info);
  Napi::Value Map(const Napi::CallbackInfo& info);
  Napi::Value Truncate(const Napi::CallbackInfo& info);
  Napi::Value Sync(const Napi::CallbackInfo& info);
  Napi::Value SyncAsync(const Napi::CallbackInfo& info);
  Napi::Value Lock(const Napi::CallbackInfo& info);
  Napi::Value Stat(const Napi::CallbackInfo& info);
  Napi::Value ReadInto(const Napi::CallbackInfo& info);
  Napi::Value Write(const Napi::CallbackInfo& info);
  Napi::Value WriteInBackground(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value SizeNow(Napi::Env env);

  bool CheckOpen(Napi::Env env, const char* syscall);

  int fd_ = -1;
  std::string path_;
};

}  // namespace mmap_native

#endif
