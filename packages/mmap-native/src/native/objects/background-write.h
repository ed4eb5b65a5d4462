// A pwrite queued on libuv's thread pool that the main thread can wait for without the
// event loop. A cache packs layer after layer in one synchronous call; writing each packed
// layer to its file while the next one is packed takes the copy into the page cache off
// the main thread, and the cache waits only before it reuses the bytes or commits them.
#ifndef MMAP_NATIVE_OBJECTS_BACKGROUND_WRITE_H
#define MMAP_NATIVE_OBJECTS_BACKGROUND_WRITE_H

#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace mmap_native {

// One stretch of bytes to write at a file position; sync_before: fdatasync first, so every
// byte written before it reaches the disk before this one is written.
struct WritePart {
  const uint8_t* data;
  size_t length;
  uint64_t position;
  bool sync_before;
};

// What the task does after its parts (when every one was written).
struct WriteEnd {
  // Starts the parts' write-back to disk (Linux sync_file_range) without waiting for it.
  bool start_writeback = false;
  bool sync_after = false;
  // Releases the flock the caller holds on the file (also after a failure): the task's
  // descriptor shares the caller's open file description, and flock belongs to that.
  bool release_lock = false;
};

// The result of one write: set once by the thread-pool thread, read by the main thread.
// Owned by two (the worker and the JS handle), each calling Release() once: a counted
// pointer of our own, as std::shared_ptr would make the addon need glibc 2.32
// (__libc_single_threaded) where Node 20 needs 2.28.
class WriteOutcome {
 public:
  void Release() {
    if (owners_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  void Finish(int err, const char* syscall);
  bool Done();
  // Blocks until Finish() has run; returns its error (0: every step done) and the call
  // that failed.
  int Wait(const char** syscall);

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  int err_ = 0;
  const char* syscall_ = "pwrite";
  std::atomic<int> owners_{2};
};

// The JS handle of a queued write: `done` (never blocks) and `wait()` (blocks, then throws
// the write's error, if any, every time it is called).
class BackgroundWrite : public Napi::ObjectWrap<BackgroundWrite> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  explicit BackgroundWrite(const Napi::CallbackInfo& info);
  ~BackgroundWrite() override;

  // Queues one thread-pool task that writes the parts in order (pwrite each, with an
  // fdatasync first where a part asks for one, stopping at the first error), then does
  // `end`, through `fd`, which it owns (closed once the task is done; a
  // duplicate, so a close() of the file meanwhile cannot redirect the writes to a reused
  // descriptor number). `buffers` (those the parts point into) are held until then.
  static Napi::Value Start(Napi::Env env, int fd, const std::vector<Napi::ArrayBuffer>& buffers,
                           std::vector<WritePart> parts, WriteEnd end,
                           const std::string& path);

 private:
  Napi::Value IsDone(const Napi::CallbackInfo& info);
  Napi::Value Wait(const Napi::CallbackInfo& info);

  WriteOutcome* outcome_ = nullptr;
  std::string path_;
};

}  // namespace mmap_native

#endif
