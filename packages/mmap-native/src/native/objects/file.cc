#include "file.h"

#include <errno.h>

#include <string>

#include "../posix/sys.h"
#include "../util/args.h"
#include "../util/errors.h"
#include "background-write.h"
#include "mapping.h"

namespace mmap_native {

Napi::Function File::DefineClass(Napi::Env env) {
  return ObjectWrap<File>::DefineClass(env, "NativeFile",
                                       {
                                           InstanceAccessor<&File::GetFd>("fd"),
                                           InstanceMethod<&File::Size>("size"),
                                           InstanceMethod<&File::Grow>("grow"),
                                           InstanceMethod<&File::Map>("map"),
                                           InstanceMethod<&File::Truncate>("truncate"),
                                           InstanceMethod<&File::Sync>("sync"),
                                           InstanceMethod<&File::SyncAsync>("syncAsync"),
                                           InstanceMethod<&File::Lock>("lock"),
                                           InstanceMethod<&File::Stat>("stat"),
                                           InstanceMethod<&File::ReadInto>("readInto"),
                                           InstanceMethod<&File::Write>("write"),
                                           InstanceMethod<&File::WriteInBackground>(
                                               "writeInBackground"),
                                           InstanceMethod<&File::Close>("close"),
                                       });
}

File::File(const Napi::CallbackInfo& info) : Napi::ObjectWrap<File>(info) {
  Napi::Env env = info.Env();
  int32_t mode = 0;
  int32_t permissions = 0;
  if (!ReadString(env, info[0], "path", &path_)) return;
  if (!ReadInt32(env, info[1], "mode", &mode)) return;
  if (!ReadInt32(env, info[2], "permissions", &permissions)) return;
  bool follow_symlinks = true;
  if (!info[3].IsUndefined() && !ReadBool(env, info[3], "followSymlinks", &follow_symlinks)) {
    return;
  }
  const char* syscall = "open";
  int err = sys::Open(path_, mode, static_cast<uint32_t>(permissions), follow_symlinks, &fd_,
                      &syscall);
  if (err == sys::kNotRegularFile) {
    fd_ = -1;
    ThrowCodeError(env, "ERR_MMAP_NOT_REGULAR_FILE",
                   "only regular files can be mapped: '" + path_ + "' is not one", "open",
                   path_);
  } else if (err != 0) {
    fd_ = -1;
    ThrowSystemError(env, err, syscall, path_);
  }
}

File::~File() {
  // Safety net for a file dropped without close(). Mappings stay valid: POSIX keeps a
  // mapping alive independently of the descriptor it was created from.
  if (fd_ >= 0) sys::Close(fd_);
}

bool File::CheckOpen(Napi::Env env, const char* syscall) {
  if (fd_ >= 0) return true;
  ThrowSystemError(env, EBADF, syscall, path_);
  return false;
}

Napi::Value File::GetFd(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), fd_);
}

Napi::Value File::Size(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!CheckOpen(env, "fstat")) return env.Undefined();
  return SizeNow(env);
}

Napi::Value File::Grow(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t new_size = 0;
  bool sparse = false;
  if (!ReadUint64(env, info[0], "newSize", &new_size)) return env.Undefined();
  if (!ReadBool(env, info[1], "sparse", &sparse)) return env.Undefined();
  if (!CheckOpen(env, sparse ? "ftruncate" : "posix_fallocate")) return env.Undefined();
  const char* syscall = "fstat";
  if (int err = sys::Grow(fd_, new_size, sparse, &syscall)) {
    ThrowSystemError(env, err, syscall, path_);
    return env.Undefined();
  }
  return SizeNow(env);
}

// truncate(newSize) → the new size. ftruncate to exactly newSize, shrinking too.
Napi::Value File::Truncate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t new_size = 0;
  if (!ReadUint64(env, info[0], "newSize", &new_size)) return env.Undefined();
  if (!CheckOpen(env, "ftruncate")) return env.Undefined();
  if (int err = sys::Truncate(fd_, new_size)) {
    ThrowSystemError(env, err, "ftruncate", path_);
    return env.Undefined();
  }
  return SizeNow(env);
}

// The file's size now (fstat), or undefined with the error thrown.
Napi::Value File::SizeNow(Napi::Env env) {
  uint64_t size = 0;
  if (int err = sys::Size(fd_, &size)) {
    ThrowSystemError(env, err, "fstat", path_);
    return env.Undefined();
  }
  return MakeUint64(env, size);
}

Napi::Value File::Map(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t offset = 0;
  uint64_t length = 0;
  bool shared = false;
  double max_length = 0;
  if (!ReadUint64(env, info[0], "offset", &offset)) return env.Undefined();
  if (!ReadUint64(env, info[1], "length", &length)) return env.Undefined();
  if (!ReadBool(env, info[2], "writable", &shared)) return env.Undefined();
  if (!info[3].IsNumber()) {
    ThrowTypeError(env, "Expected a number for maxLength");
    return env.Undefined();
  }
  max_length = info[3].As<Napi::Number>().DoubleValue();
  if (length == 0 || static_cast<double>(length) > max_length) {
    ThrowRangeError(env, "Expected a length between 1 and the largest ArrayBuffer for length");
    return env.Undefined();
  }
  if (!CheckOpen(env, "mmap")) return env.Undefined();

  uint64_t size = 0;
  if (int err = sys::Size(fd_, &size)) {
    ThrowSystemError(env, err, "fstat", path_);
    return env.Undefined();
  }
  // Never map past end-of-file: touching such a page raises SIGBUS.
  if (offset > size || length > size - offset) {
    ThrowCodeError(env, "ERR_MMAP_PAST_EOF",
                   "cannot map bytes [" + std::to_string(offset) + ", " +
                       std::to_string(offset + length) + ") of a file of " +
                       std::to_string(size) + " bytes: grow the file first",
                   "mmap", path_);
    return env.Undefined();
  }

  const uint64_t page = sys::PageSize();
  const uint64_t aligned = offset - offset % page;
  const size_t delta = static_cast<size_t>(offset - aligned);
  const size_t mapped_length = delta + static_cast<size_t>(length);
  void* base = nullptr;
  if (int err = sys::Map(fd_, aligned, mapped_length, shared, &base)) {
    ThrowSystemError(env, err, "mmap", path_);
    return env.Undefined();
  }
  return Mapping::Create(env, base, mapped_length, delta, static_cast<size_t>(length), path_);
}

Napi::Value File::Sync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  bool data_only = false;
  if (!ReadBool(env, info[0], "dataOnly", &data_only)) return env.Undefined();
  const char* syscall = data_only ? "fdatasync" : "fsync";
  if (!CheckOpen(env, syscall)) return env.Undefined();
  if (int err = sys::SyncFile(fd_, data_only)) ThrowSystemError(env, err, syscall, path_);
  return env.Undefined();
}

namespace {

// fsync/fdatasync on libuv's thread pool. It works on its own duplicate of the descriptor,
// so a close() of the file meanwhile cannot make it sync a reused descriptor number.
class SyncWorker : public Napi::AsyncWorker {
 public:
  SyncWorker(Napi::Env env, int fd, bool data_only, const std::string& path)
      : Napi::AsyncWorker(env, "mmap-native:sync"),
        deferred_(Napi::Promise::Deferred::New(env)),
        fd_(fd),
        data_only_(data_only),
        path_(path) {}
  ~SyncWorker() override {
    if (fd_ >= 0) sys::Close(fd_);
  }
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    err_ = sys::SyncFile(fd_, data_only_);
    sys::Close(fd_);
    fd_ = -1;
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (err_ == 0) {
      deferred_.Resolve(env.Undefined());
      return;
    }
    Napi::Value error = SystemError(env, err_, data_only_ ? "fdatasync" : "fsync", path_);
    if (error.IsEmpty()) error = env.GetAndClearPendingException().Value();
    deferred_.Reject(error);
  }

 private:
  Napi::Promise::Deferred deferred_;
  int fd_;
  bool data_only_;
  std::string path_;
  int err_ = 0;
};

}  // namespace

// syncAsync(dataOnly) → a promise of the sync done on the thread pool.
Napi::Value File::SyncAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  bool data_only = false;
  if (!ReadBool(env, info[0], "dataOnly", &data_only)) return env.Undefined();
  const char* syscall = data_only ? "fdatasync" : "fsync";
  if (!CheckOpen(env, syscall)) return env.Undefined();
  int copy = -1;
  if (int err = sys::Duplicate(fd_, &copy)) {
    ThrowSystemError(env, err, "fcntl", path_);
    return env.Undefined();
  }
  auto* worker = new SyncWorker(env, copy, data_only, path_);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Value File::Lock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t kind = 0;
  bool wait = false;
  if (!ReadInt32(env, info[0], "kind", &kind)) return env.Undefined();
  if (!ReadBool(env, info[1], "wait", &wait)) return env.Undefined();
  if (!CheckOpen(env, "flock")) return env.Undefined();
  if (int err = sys::Lock(fd_, kind, wait)) ThrowSystemError(env, err, "flock", path_);
  return env.Undefined();
}

Napi::Value File::Stat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!CheckOpen(env, "fstat")) return env.Undefined();
  sys::FileInfo st;
  if (int err = sys::Stat(fd_, &st)) {
    ThrowSystemError(env, err, "fstat", path_);
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("dev", MakeUint64(env, st.dev));
  result.Set("ino", MakeUint64(env, st.ino));
  result.Set("size", MakeUint64(env, st.size));
  result.Set("mode", Napi::Number::New(env, static_cast<double>(st.mode)));
  result.Set("uid", Napi::Number::New(env, static_cast<double>(st.uid)));
  result.Set("gid", Napi::Number::New(env, static_cast<double>(st.gid)));
  result.Set("mtimeNs", Napi::BigInt::New(env, st.mtime_ns));
  return result;
}

namespace {

// The bytes of a Uint8Array argument (empty for a detached buffer).
bool ReadBytes(Napi::Env env, Napi::Value value, const char* name, uint8_t** data,
               size_t* length) {
  if (!value.IsTypedArray() ||
      value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    ThrowTypeError(env, std::string("Expected a Uint8Array for ") + name);
    return false;
  }
  Napi::Uint8Array array = value.As<Napi::Uint8Array>();
  *data = array.Data();
  *length = array.ByteLength();
  return true;
}

bool FitsOffset(uint64_t position, size_t length) {
  return static_cast<uint64_t>(length) <= static_cast<uint64_t>(INT64_MAX) - position;
}

}  // namespace

// readInto(target: Uint8Array, position) → bytes read (short only at end of file).
Napi::Value File::ReadInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* data = nullptr;
  size_t length = 0;
  uint64_t position = 0;
  if (!ReadBytes(env, info[0], "target", &data, &length)) return env.Undefined();
  if (!ReadUint64(env, info[1], "position", &position)) return env.Undefined();
  if (!CheckOpen(env, "pread")) return env.Undefined();
  if (!FitsOffset(position, length)) {
    ThrowSystemError(env, EFBIG, "pread", path_);
    return env.Undefined();
  }
  size_t done = 0;
  if (int err = sys::ReadAt(fd_, data, length, position, &done)) {
    ThrowSystemError(env, err, "pread", path_);
    return env.Undefined();
  }
  return Napi::Number::New(env, static_cast<double>(done));
}

// write(source: Uint8Array, position): all bytes or an error.
Napi::Value File::Write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint8_t* data = nullptr;
  size_t length = 0;
  uint64_t position = 0;
  if (!ReadBytes(env, info[0], "source", &data, &length)) return env.Undefined();
  if (!ReadUint64(env, info[1], "position", &position)) return env.Undefined();
  if (!CheckOpen(env, "pwrite")) return env.Undefined();
  if (!FitsOffset(position, length)) {
    ThrowSystemError(env, EFBIG, "pwrite", path_);
    return env.Undefined();
  }
  if (int err = sys::WriteAt(fd_, data, length, position)) {
    ThrowSystemError(env, err, "pwrite", path_);
  }
  return env.Undefined();
}

// writeInBackground(sources: Uint8Array[], positions) → a handle of one thread-pool task
// writing sources[i] at positions[i] in order (background-write.h). No source may change
// until the task is done.
Napi::Value File::WriteInBackground(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray() || !info[1].IsArray()) {
    ThrowTypeError(env, "Expected arrays for sources and positions");
    return env.Undefined();
  }
  Napi::Array sources = info[0].As<Napi::Array>();
  Napi::Array positions = info[1].As<Napi::Array>();
  const uint32_t count = sources.Length();
  if (positions.Length() != count) {
    ThrowRangeError(env, "Expected as many positions as sources");
    return env.Undefined();
  }
  // Optional: syncBefore (booleans, one per part), syncAfter, releaseLock, startWriteback.
  const bool has_syncs = info.Length() > 2 && !info[2].IsUndefined();
  if (has_syncs && (!info[2].IsArray() || info[2].As<Napi::Array>().Length() != count)) {
    ThrowRangeError(env, "Expected one syncBefore flag per source");
    return env.Undefined();
  }
  WriteEnd end;
  if (info.Length() > 3 && !ReadBool(env, info[3], "syncAfter", &end.sync_after)) {
    return env.Undefined();
  }
  if (info.Length() > 4 && !ReadBool(env, info[4], "releaseLock", &end.release_lock)) {
    return env.Undefined();
  }
  if (info.Length() > 5 &&
      !ReadBool(env, info[5], "startWriteback", &end.start_writeback)) {
    return env.Undefined();
  }
  std::vector<Napi::ArrayBuffer> buffers;
  std::vector<WritePart> parts;
  buffers.reserve(count);
  parts.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    Napi::Value source = sources.Get(i);
    WritePart part{nullptr, 0, 0, false};
    if (has_syncs &&
        !ReadBool(env, info[2].As<Napi::Array>().Get(i), "syncBefore", &part.sync_before)) {
      return env.Undefined();
    }
    uint8_t* data = nullptr;
    if (!ReadBytes(env, source, "source", &data, &part.length)) return env.Undefined();
    if (!ReadUint64(env, positions.Get(i), "position", &part.position)) return env.Undefined();
    if (!FitsOffset(part.position, part.length)) {
      ThrowSystemError(env, EFBIG, "pwrite", path_);
      return env.Undefined();
    }
    part.data = data;
    buffers.push_back(source.As<Napi::Uint8Array>().ArrayBuffer());
    parts.push_back(part);
  }
  if (!CheckOpen(env, "pwrite")) return env.Undefined();
  int copy = -1;
  if (int err = sys::Duplicate(fd_, &copy)) {
    ThrowSystemError(env, err, "fcntl", path_);
    return env.Undefined();
  }
  return BackgroundWrite::Start(env, copy, buffers, std::move(parts), end, path_);
}

Napi::Value File::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (fd_ < 0) return env.Undefined();  // second close: no-op
  int fd = fd_;
  fd_ = -1;
  if (int err = sys::Close(fd)) ThrowSystemError(env, err, "close", path_);
  return env.Undefined();
}

}  // namespace mmap_native
