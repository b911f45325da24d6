//===- AsyncTasks.cpp - count the async tasks of a runner's code ---------===//

#include "AsyncTasks.h"
#include "BufferCache.h"

#include "llvm/Support/DynamicLibrary.h"

using namespace mlir::tx::detail;

namespace {
thread_local std::shared_ptr<TaskCounter> currentCounter;

using CoroHandle = void *;
using CoroResume = void (*)(void *);

/// A task handed to the runtime: the coroutine to resume, and the counter
/// and cache of the code that started it.
struct Task {
  CoroHandle handle;
  CoroResume resume;
  std::shared_ptr<TaskCounter> counter;
  BufferCache *cache;
};

/// What the runtime's worker (or the awaiting thread) runs.
void runTask(void *opaque) {
  std::unique_ptr<Task> task(static_cast<Task *>(opaque));
  {
    TaskCounter::Scope scope(task->counter, task->cache);
    task->resume(task->handle);
  }
  // The task's JIT'd code has returned: only now may its engine go. (The
  // counter itself lives as long as `task` holds it.)
  if (task->counter)
    task->counter->finished();
}

Task *startTask(CoroHandle handle, CoroResume resume) {
  auto *task = new Task{handle, resume, currentCounter, BufferCache::current()};
  if (task->counter)
    task->counter->started();
  return task;
}

/// The runtime's own functions (libmlir_async_runtime, loaded by the runner
/// before any module that needs it is linked).
struct RuntimeFunctions {
  void (*execute)(CoroHandle, CoroResume) = nullptr;
  void (*awaitToken)(void *, CoroHandle, CoroResume) = nullptr;
  void (*awaitValue)(void *, CoroHandle, CoroResume) = nullptr;
  void (*awaitGroup)(void *, CoroHandle, CoroResume) = nullptr;
  bool found() const { return execute && awaitToken && awaitValue && awaitGroup; }
};
/// Looked up once, at the first module that uses the runtime (the runner
/// loads the library before it asks for asyncTaskSymbols).
const RuntimeFunctions &runtime() {
  static const RuntimeFunctions functions = [] {
    auto find = [](const char *name) {
      return llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name);
    };
    RuntimeFunctions f;
    f.execute =
        reinterpret_cast<decltype(f.execute)>(find("mlirAsyncRuntimeExecute"));
    f.awaitToken = reinterpret_cast<decltype(f.awaitToken)>(
        find("mlirAsyncRuntimeAwaitTokenAndExecute"));
    f.awaitValue = reinterpret_cast<decltype(f.awaitValue)>(
        find("mlirAsyncRuntimeAwaitValueAndExecute"));
    f.awaitGroup = reinterpret_cast<decltype(f.awaitGroup)>(
        find("mlirAsyncRuntimeAwaitAllInGroupAndExecute"));
    return f;
  }();
  return functions;
}

void execute(CoroHandle handle, CoroResume resume) {
  runtime().execute(startTask(handle, resume), &runTask);
}
void awaitTokenAndExecute(void *token, CoroHandle handle, CoroResume resume) {
  runtime().awaitToken(token, startTask(handle, resume), &runTask);
}
void awaitValueAndExecute(void *value, CoroHandle handle, CoroResume resume) {
  runtime().awaitValue(value, startTask(handle, resume), &runTask);
}
void awaitAllInGroupAndExecute(void *group, CoroHandle handle,
                               CoroResume resume) {
  runtime().awaitGroup(group, startTask(handle, resume), &runTask);
}
} // namespace

void TaskCounter::started() {
  std::lock_guard<std::mutex> guard(lock);
  ++inFlight;
  ++startedCount;
}

void TaskCounter::finished() {
  std::lock_guard<std::mutex> guard(lock);
  if (--inFlight == 0)
    idle.notify_all();
}

bool TaskCounter::waitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard(lock);
  return idle.wait_for(guard, timeout, [&] { return inFlight == 0; });
}

uint64_t TaskCounter::total() const {
  std::lock_guard<std::mutex> guard(lock);
  return startedCount;
}

TaskCounter::Scope::Scope(std::shared_ptr<TaskCounter> counter,
                          BufferCache *cache)
    : previous(std::move(currentCounter)), cacheScope(cache) {
  currentCounter = std::move(counter);
}

TaskCounter::Scope::~Scope() { currentCounter = std::move(previous); }

std::vector<std::pair<const char *, void *>>
mlir::tx::detail::asyncTaskSymbols() {
  if (!runtime().found())
    return {};
  return {
      {"mlirAsyncRuntimeExecute", reinterpret_cast<void *>(&execute)},
      {"mlirAsyncRuntimeAwaitTokenAndExecute",
       reinterpret_cast<void *>(&awaitTokenAndExecute)},
      {"mlirAsyncRuntimeAwaitValueAndExecute",
       reinterpret_cast<void *>(&awaitValueAndExecute)},
      {"mlirAsyncRuntimeAwaitAllInGroupAndExecute",
       reinterpret_cast<void *>(&awaitAllInGroupAndExecute)},
  };
}
