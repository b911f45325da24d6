//===- AsyncTasks.h - count the async tasks of a runner's code --*- C++ -*-===//
//
// Code lowered with tx-to-cpu{threads=N} hands its tasks (coroutine
// resumptions) to MLIR's async runtime, whose worker threads run them. The
// caller is woken by a task's token before that task has returned: a worker
// can still be executing the JIT'd code of the task's end (dropping
// references, freeing its frame) when the caller's call returns. Destroying
// the ExecutionEngine then would unmap code a worker runs.
//
// The runner therefore registers its own versions of the runtime functions
// that hand work to workers (mlirAsyncRuntimeExecute and the three
// mlirAsyncRuntimeAwait*AndExecute): each counts a task as started, and
// hands the runtime a trampoline that resumes the task and counts it as
// finished after the task's JIT'd code has returned. The runner waits for
// its count to reach zero before it destroys the engine.
//
// The task's runner is found through the thread: a call (or a task) sets
// the runner's TaskCounter and BufferCache for its thread, and each task
// runs with those of the code that started it.
//
//===----------------------------------------------------------------------===//

#ifndef TX_LIB_EXECUTION_ASYNCTASKS_H
#define TX_LIB_EXECUTION_ASYNCTASKS_H

#include "BufferCache.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace mlir::tx::detail {

class TaskCounter {
public:
  void started();
  void finished();
  /// Waits until every started task finished; false after `timeout`.
  bool waitIdle(std::chrono::milliseconds timeout);
  /// Tasks started over the counter's life.
  uint64_t total() const;

  /// Makes `counter` and `cache` those of the code running on this thread
  /// while the scope lives.
  class Scope {
  public:
    Scope(std::shared_ptr<TaskCounter> counter, BufferCache *cache);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    std::shared_ptr<TaskCounter> previous;
    BufferCache::Scope cacheScope;
  };

private:
  mutable std::mutex lock;
  std::condition_variable idle;
  int64_t inFlight = 0;
  uint64_t startedCount = 0;
};

/// The counting versions of the async runtime's functions that hand work to
/// its workers, by name, for the ExecutionEngine; empty (and nothing is
/// wrapped) when libmlir_async_runtime is not loaded into the process.
std::vector<std::pair<const char *, void *>> asyncTaskSymbols();

} // namespace mlir::tx::detail

#endif // TX_LIB_EXECUTION_ASYNCTASKS_H
