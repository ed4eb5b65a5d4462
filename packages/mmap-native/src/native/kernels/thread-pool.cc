#include "thread-pool.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MMAP_NATIVE_CPU_RELAX() _mm_pause()
#else
#define MMAP_NATIVE_CPU_RELAX() std::this_thread::yield()
#endif

namespace mmap_native {

namespace {

// state_: bits 0-8 the helpers joined, 9-17 the helpers the job allows (helper i joins
// only when i is below it), bit 18 open (helpers may still join), the rest the generation.
// A helper joins with a compare-and-swap from the exact state it saw, so it joins only the
// job it read, and only while that job is open.
constexpr uint64_t kJoinedMask = (uint64_t{1} << 9) - 1;
constexpr int kAllowedShift = 9;
constexpr uint64_t kOpen = uint64_t{1} << 18;
constexpr int kGenerationShift = 19;

uint64_t GenerationOf(uint64_t state) { return state >> kGenerationShift; }

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

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
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
                            GenerationOf(state_.load(std::memory_order_relaxed)));
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
  // No helper is joined (the last job waited for them all): the fields are the caller's.
  task_ = task;
  context_ = context;
  count_ = count;
  next_.store(0, std::memory_order_relaxed);
  const uint64_t generation = GenerationOf(state_.load(std::memory_order_relaxed)) + 1;
  // seq_cst, as is the load of sleeping_ after it: a helper that is about to sleep either
  // sees this job or is seen sleeping, and then woken.
  state_.store((generation << kGenerationShift) | kOpen |
               (static_cast<uint64_t>(helpers) << kAllowedShift));
  if (sleeping_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  RunTasks();
  // Every task is taken: a helper that comes now has nothing to do and must not read
  // this job, whose context ends when Run returns.
  state_.fetch_and(~kOpen);
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
  const auto done = [this] {
    return (state_.load(std::memory_order_acquire) & kJoinedMask) == 0;
  };
  if (PollFor(done)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  // seq_cst, as is the helpers' leaving: either the last one sees this flag and wakes the
  // caller, or the caller sees it gone.
  waiting_.store(true);
  idle_.wait(lock, [this] { return (state_.load() & kJoinedMask) == 0; });
  waiting_.store(false, std::memory_order_relaxed);
}

void ThreadPool::Work(size_t index, uint64_t seen) {
  for (;;) {
    const auto moved = [&] {
      return stop_.load(std::memory_order_relaxed) ||
             GenerationOf(state_.load(std::memory_order_acquire)) != seen;
    };
    if (!PollFor(moved)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_.fetch_add(1);  // seq_cst: see Run
      wake_.wait(lock, [&] {
        return stop_.load() || GenerationOf(state_.load()) != seen;
      });
      sleeping_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load()) return;
    uint64_t state = state_.load(std::memory_order_acquire);
    seen = GenerationOf(state);
    // Joins the job just seen if it is open, wants this helper, and has not moved on.
    bool joined = false;
    while ((state & kOpen) != 0 && GenerationOf(state) == seen &&
           index < ((state >> kAllowedShift) & kJoinedMask)) {
      if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acquire,
                                       std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    RunTasks();
    // seq_cst, as is the caller's flag: see WaitForHelpers.
    if ((state_.fetch_sub(1) & kJoinedMask) == 1 && waiting_.load()) {
      // Under the lock, so the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.notify_one();
    }
  }
}

}  // namespace mmap_native
