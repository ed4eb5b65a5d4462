// The kernels' own intra-op thread pool, one per addon instance (main thread or worker),
// owned by its AddonData and joined when that environment is torn down.
//
// Not libuv's pool: the cache's background writes run there, and a synchronous call that
// waited for libuv work queued behind them (or behind a full pool) could wait for ever.
// Threads start on first use (a process that never asks for threads > 1 has none), sleep
// on a condition variable when idle, and are plain threads the event loop does not know
// about, so they never keep the process alive.
//
// A model runs a job per layer, each a few microseconds of work: posting a job, joining it
// and leaving it take no lock (one atomic word holds the job's generation, whether it is
// open and who joined); the mutex is only for threads that sleep.
#ifndef MMAP_NATIVE_KERNELS_THREAD_POOL_H
#define MMAP_NATIVE_KERNELS_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace mmap_native {

class ThreadPool {
 public:
  using Task = void (*)(void* context, size_t index);

  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();  // wakes and joins every thread

  // Runs task(context, i) for every i < count, on the calling thread and on up to `helpers`
  // pool threads (started when missing), and returns when all have run. Called from one
  // thread at a time (the environment's JavaScript thread). The caller takes tasks too and
  // never waits for a helper that has not joined in: on a busy machine a helper may not
  // get a core before the caller has done everything itself.
  void Run(size_t helpers, size_t count, Task task, void* context);

 private:
  void Start(size_t threads);
  void Work(size_t index, uint64_t seen);
  void RunTasks();
  void WaitForHelpers();

  std::mutex mutex_;
  std::condition_variable wake_;  // helpers: a new job, or stop
  std::condition_variable idle_;  // the caller: the last helper is done
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> sleeping_{0};   // helpers waiting (or about to wait) on wake_
  std::atomic<bool> waiting_{false};  // the caller waits (or is about to) on idle_
  // The job: generation, open, helpers allowed, helpers joined (see thread-pool.cc). A
  // helper reads the fields below only once it has joined, and the caller writes them
  // only when no helper is joined.
  std::atomic<uint64_t> state_{0};
  Task task_ = nullptr;
  void* context_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};  // next task index to take
};

}  // namespace mmap_native

#endif
