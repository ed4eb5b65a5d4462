// A page costs a fault on its first touch: ~4 µs per fresh 4 KiB page written on a virtual
// machine (the kernel zeroes it then), ~8 µs per fault of a file mapping read whose pages
// are in the page cache (each fault maps 16 of them). Faulting a buffer's pages in on a
// thread-pool thread, while the main thread works on what came before, takes that cost off
// the main thread. MADV_POPULATE_READ/WRITE never change a byte, so the main thread may
// read or write the same pages at the same time.
#include "prefault.h"

#include <errno.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../util/errors.h"
#include "sys.h"

namespace mmap_native {

namespace {

// Set once the kernel has said it does not know the advice (ENOSYS, or EINVAL before Linux
// 5.14): later calls then settle at once instead of queueing work that cannot help. One per
// access, so a refusal of one never turns the other off.
std::atomic<bool> read_unsupported{false};
std::atomic<bool> write_unsupported{false};

std::atomic<bool>& Unsupported(bool write) { return write ? write_unsupported : read_unsupported; }

// Pages are populated this many bytes per madvise call. Each call holds the mm lock for
// reading; a main-thread mmap or munmap, which takes it for writing, then waits for one
// chunk at most (tens of microseconds), never for the whole buffer.
constexpr uintptr_t kChunkBytes = uintptr_t{2} << 20;

// Safe if the buffer's mapping is closed (munmap) while this runs: the ArrayBuffer is held,
// but the pages are the mapping's. A chunk after the munmap fails with ENOMEM and the work
// stops (settles false). If a later mmap reused the range meanwhile, populating it only
// faults that mapping's pages in: read only reads (page-cache pages mapped, or the zero
// page); write stores nothing but costs as a first write would (copies of a private
// mapping's pages, dirty pages of a shared one).
class PrefaultWorker : public Napi::AsyncWorker {
 public:
  PrefaultWorker(Napi::Env env, Napi::ArrayBuffer buffer, uintptr_t start, uintptr_t end,
                 bool write)
      : Napi::AsyncWorker(env, "mmap-native:prefault"),
        deferred_(Napi::Promise::Deferred::New(env)),
        // Holds the buffer until the work is done, so its memory stays allocated.
        buffer_(Napi::Persistent(buffer)),
        start_(start),
        end_(end),
        write_(write) {}
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    for (uintptr_t at = start_; at < end_ && err_ == 0;) {
      const uintptr_t next = std::min(end_, (at / kChunkBytes + 1) * kChunkBytes);
      err_ = sys::Populate(reinterpret_cast<void*>(at), next - at, write_);
      at = next;
    }
    // EINVAL also means a range the access does not fit (write to a read-only mapping):
    // only an advice the kernel does not know turns prefault off.
    if ((err_ == ENOSYS || err_ == EINVAL) &&
        !sys::PopulateKnown(reinterpret_cast<void*>(start_), write_)) {
      Unsupported(write_).store(true, std::memory_order_relaxed);
    }
  }
  void OnOK() override { deferred_.Resolve(Napi::Boolean::New(Env(), err_ == 0)); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::Reference<Napi::ArrayBuffer> buffer_;
  const uintptr_t start_;
  const uintptr_t end_;
  const bool write_;
  int err_ = 0;
};

Napi::Value Settled(Napi::Env env, bool value) {
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  deferred.Resolve(Napi::Boolean::New(env, value));
  return deferred.Promise();
}

Napi::Value StartPrefault(const Napi::CallbackInfo& info, bool write) {
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
  if (data == 0 || end <= start || Unsupported(write).load(std::memory_order_relaxed)) {
    return Settled(env, false);
  }
  auto* worker = new PrefaultWorker(env, buffer, start, end, write);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

// prefault(buffer) → a promise of true once every whole page inside `buffer` is faulted in
// writable, false when nothing was done (no whole page, unsupported, or refused: it is
// advice, so a failure is not an error).
Napi::Value Prefault(const Napi::CallbackInfo& info) { return StartPrefault(info, true); }

// prefaultRead(buffer): the same with the pages faulted in readable only (a read-only
// mapping's page tables filled from the page cache).
Napi::Value PrefaultRead(const Napi::CallbackInfo& info) { return StartPrefault(info, false); }

}  // namespace mmap_native
