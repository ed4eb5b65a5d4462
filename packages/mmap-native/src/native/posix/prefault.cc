// A fresh page costs a fault on its first write (the kernel zeroes it then): ~4 µs per
// 4 KiB page on a virtual machine, more than packing the bytes that go in it. Faulting a
// buffer's pages in on a thread-pool thread, while the main thread fills what came before
// it, takes that cost off the main thread. MADV_POPULATE_WRITE never changes a byte, so the
// main thread may write the same pages at the same time.
#include "prefault.h"

#include <errno.h>

#include <atomic>
#include <cstdint>

#include "../util/errors.h"
#include "sys.h"

namespace mmap_native {

namespace {

// Set once the kernel has said it cannot populate (ENOSYS, or EINVAL before Linux 5.14):
// later calls then settle at once instead of queueing work that cannot help.
std::atomic<bool> unsupported{false};

class PrefaultWorker : public Napi::AsyncWorker {
 public:
  PrefaultWorker(Napi::Env env, Napi::ArrayBuffer buffer, void* start, size_t length)
      : Napi::AsyncWorker(env, "mmap-native:prefault"),
        deferred_(Napi::Promise::Deferred::New(env)),
        // Holds the buffer until the work is done, so its memory stays allocated.
        buffer_(Napi::Persistent(buffer)),
        start_(start),
        length_(length) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    err_ = sys::PopulateWrite(start_, length_);
    if (err_ == ENOSYS || err_ == EINVAL) unsupported.store(true, std::memory_order_relaxed);
  }
  void OnOK() override { deferred_.Resolve(Napi::Boolean::New(Env(), err_ == 0)); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::Reference<Napi::ArrayBuffer> buffer_;
  void* start_;
  size_t length_;
  int err_ = 0;
};

Napi::Value Settled(Napi::Env env, bool value) {
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  deferred.Resolve(Napi::Boolean::New(env, value));
  return deferred.Promise();
}

}  // namespace

// prefault(buffer) → a promise of true once every whole page inside `buffer` is faulted in
// writable, false when nothing was done (no whole page, unsupported, or refused: it is
// advice, so a failure is not an error).
Napi::Value Prefault(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArrayBuffer()) {
    ThrowTypeError(env, "Expected an ArrayBuffer for buffer");
    return env.Undefined();
  }
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  const uintptr_t page = sys::PageSize();
  const uintptr_t data = reinterpret_cast<uintptr_t>(buffer.Data());
  const uintptr_t start = (data + page - 1) / page * page;
  const uintptr_t end = (data + buffer.ByteLength()) / page * page;
  if (data == 0 || end <= start || unsupported.load(std::memory_order_relaxed)) {
    return Settled(env, false);
  }
  auto* worker =
      new PrefaultWorker(env, buffer, reinterpret_cast<void*>(start), end - start);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace mmap_native
