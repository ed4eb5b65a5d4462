#include "background-write.h"

#include <errno.h>

#include <utility>

#include "../posix/sys.h"
#include "../util/addon_data.h"
#include "../util/errors.h"

namespace mmap_native {

void WriteOutcome::Finish(int err, const char* syscall) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    err_ = err;
    syscall_ = syscall;
  }
  finished_.notify_all();
}

bool WriteOutcome::Done() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

int WriteOutcome::Wait(const char** syscall) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [this] { return done_; });
  *syscall = syscall_;
  return err_;
}

namespace {

class WriteWorker : public Napi::AsyncWorker {
 public:
  WriteWorker(Napi::Env env, WriteOutcome* outcome, int fd,
              const std::vector<Napi::ArrayBuffer>& buffers, std::vector<WritePart> parts,
              WriteEnd end)
      : Napi::AsyncWorker(env, "mmap-native:write"),
        outcome_(outcome),
        fd_(fd),
        parts_(std::move(parts)),
        end_(end) {
    buffers_.reserve(buffers.size());
    for (const Napi::ArrayBuffer& buffer : buffers) buffers_.push_back(Napi::Persistent(buffer));
  }
  ~WriteWorker() override {
    if (fd_ >= 0) sys::Close(fd_);
    outcome_->Release();
  }

 protected:
  void Execute() override {
    int err = 0;
    const char* syscall = "pwrite";
    std::vector<sys::WriteRange> run;
    // Each run's place in the file, whose write-back starts once every run is written.
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (size_t i = 0; i < parts_.size();) {
      const WritePart& first = parts_[i];
      if (first.sync_before && (err = sys::SyncFile(fd_, true)) != 0) {
        syscall = "fdatasync";
        break;
      }
      // Parts that follow one another in the file go out in one write.
      run.clear();
      uint64_t end = first.position;
      for (; i < parts_.size(); i++) {
        const WritePart& part = parts_[i];
        if (part.position != end || (part.sync_before && !run.empty())) break;
        run.push_back({part.data, part.length});
        end += part.length;
      }
      err = sys::WriteRangesAt(fd_, run.data(), run.size(), first.position);
      if (err != 0) break;
      // sync_file_range reads a length of 0 as "to the end of the file".
      if (end > first.position) spans.emplace_back(first.position, end - first.position);
    }
    if (err == 0 && end_.start_writeback) {
      for (const auto& [position, length] : spans) sys::StartWriteback(fd_, position, length);
    }
    if (err == 0 && end_.sync_after && (err = sys::SyncFile(fd_, true)) != 0) {
      syscall = "fdatasync";
    }
    if (end_.release_lock) {
      int unlocked = sys::Lock(fd_, sys::kUnlock, false);
      if (err == 0 && unlocked != 0) {
        err = unlocked;
        syscall = "flock";
      }
    }
    sys::Close(fd_);
    fd_ = -1;
    outcome_->Finish(err, syscall);
  }
  // Nothing to call back: the outcome is read through the handle. The buffer references
  // are dropped when the worker is deleted, on the main thread, after this.
  void OnOK() override {}

 private:
  WriteOutcome* outcome_;
  std::vector<Napi::Reference<Napi::ArrayBuffer>> buffers_;
  int fd_;
  std::vector<WritePart> parts_;
  WriteEnd end_;
};

}  // namespace

Napi::Function BackgroundWrite::DefineClass(Napi::Env env) {
  return ObjectWrap<BackgroundWrite>::DefineClass(
      env, "NativeBackgroundWrite",
      {
          InstanceAccessor<&BackgroundWrite::IsDone>("done"),
          InstanceMethod<&BackgroundWrite::Wait>("wait"),
      });
}

BackgroundWrite::BackgroundWrite(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<BackgroundWrite>(info) {}

BackgroundWrite::~BackgroundWrite() {
  if (outcome_ != nullptr) outcome_->Release();
}

Napi::Value BackgroundWrite::Start(Napi::Env env, int fd,
                                   const std::vector<Napi::ArrayBuffer>& buffers,
                                   std::vector<WritePart> parts, WriteEnd end,
                                   const std::string& path) {
  Napi::Object handle = GetAddonData(env)->background_write_constructor.New({});
  if (env.IsExceptionPending()) {
    if (end.release_lock) sys::Lock(fd, sys::kUnlock, false);
    sys::Close(fd);
    return env.Undefined();
  }
  auto* outcome = new WriteOutcome();
  BackgroundWrite* self = BackgroundWrite::Unwrap(handle);
  self->outcome_ = outcome;
  self->path_ = path;
  auto* worker = new WriteWorker(env, outcome, fd, buffers, std::move(parts), end);
  worker->Queue();
  if (env.IsExceptionPending()) {
    // Never queued: nothing will run or finish it (deleting the worker releases its share).
    if (end.release_lock) sys::Lock(fd, sys::kUnlock, false);
    outcome->Finish(EIO, "pwrite");
    delete worker;
    return env.Undefined();
  }
  return handle;
}

Napi::Value BackgroundWrite::IsDone(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), outcome_ == nullptr || outcome_->Done());
}

Napi::Value BackgroundWrite::Wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (outcome_ == nullptr) {
    ThrowSystemError(env, EINVAL, "pwrite", path_);  // not made by writeInBackground()
    return env.Undefined();
  }
  const char* syscall = "pwrite";
  if (int err = outcome_->Wait(&syscall)) ThrowSystemError(env, err, syscall, path_);
  return env.Undefined();
}

}  // namespace mmap_native
