#include "thread-pool.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "../util/addon_data.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MMAP_NATIVE_CPU_RELAX() _mm_pause()
#else
#define MMAP_NATIVE_CPU_RELAX() std::this_thread::yield()
#endif

namespace mmap_native {

namespace {

// How long a helper keeps polling for the next job before it sleeps, and how long the
// caller polls for the helpers before it sleeps. A model's layers run back to back a few
// microseconds apart: polling that long lets the next layer start without a futex wake
// (tens of microseconds on a busy machine); past it, an idle pool sleeps and costs nothing.
constexpr auto kPollFor = std::chrono::microseconds(50);

template <class Ready>
bool PollFor(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kPollFor;
  for (unsigned spins = 1;; ++spins) {
    if (ready()) return true;
    MMAP_NATIVE_CPU_RELAX();
    if (spins % 64 == 0 && std::chrono::steady_clock::now() >= until) return ready();
  }
}

}  // namespace

void ThreadPoolDeleter::operator()(ThreadPool* pool) const { delete pool; }

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ThreadPool::Start(size_t threads) {
  while (threads_.size() < threads) {
    try {
      // The thread waits for jobs after the current one: it must not read the generation
      // itself, which the job about to be posted may already have moved.
      threads_.emplace_back(&ThreadPool::Work, this, threads_.size(),
                            generation_.load(std::memory_order_relaxed));
    } catch (const std::system_error&) {
      return;  // no more threads to be had: the job runs on those there are
    }
  }
}

void ThreadPool::Run(size_t helpers, size_t count, Task task, void* context) {
  Start(helpers);
  helpers = std::min(helpers, threads_.size());
  if (helpers == 0 || count <= 1) {
    for (size_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_helpers_ = helpers;
    task_ = task;
    context_ = context;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    open_ = true;
    generation_.fetch_add(1, std::memory_order_release);
    wake = sleeping_ > 0;
  }
  if (wake) wake_.notify_all();
  RunTasks();
  {
    // Every task is taken: a helper that comes now has nothing to do and must not read
    // this job, whose context ends when Run returns.
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = false;
  }
  WaitForHelpers();
}

void ThreadPool::RunTasks() {
  for (;;) {
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) return;
    task_(context_, i);
  }
}

void ThreadPool::WaitForHelpers() {
  const auto done = [this] { return joined_.load(std::memory_order_acquire) == 0; };
  if (PollFor(done)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, done);
}

void ThreadPool::Work(size_t index, uint64_t seen) {
  for (;;) {
    const auto moved = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!PollFor(moved)) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_;
      wake_.wait(lock, [&] { return stop_ || moved(); });
      --sleeping_;
    }
    {
      // Joins the job just posted if it is still open and wants this many helpers.
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      if (!open_ || index >= job_helpers_) continue;
      joined_.fetch_add(1, std::memory_order_relaxed);
    }
    RunTasks();
    if (joined_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Under the lock, so the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.notify_one();
    }
  }
}

}  // namespace mmap_native
