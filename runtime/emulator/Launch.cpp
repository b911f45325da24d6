//===- Launch.cpp - blocks, threads as fibers, barriers, warps ------------===//
//
// Blocks run one after another. A kernel without barriers and
// warp-collectives runs its threads one after another on the host stack; a
// kernel with them runs each thread as a fiber (Fiber.h) that yields at
// every bar.sync and warp-collective: a barrier completes when every thread
// of the block waits at it, a warp-collective executes when the 32 lanes of
// the warp have reached it (the last lane to arrive executes it for all).
// When no thread can run and no barrier can complete, the block is
// deadlocked: that is reported with what each thread waits at.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"
#include "Fiber.h"
#include "TxEmulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace tx::emulator;

namespace tx::emulator {
struct ThreadState {
  enum State { Runnable, AtBarrier, AtCollective, Done };
  int tid[3] = {0, 0, 0};
  int linear = 0;
  State state = Runnable;
  int32_t site = 0;
  IntrinsicKind kind = kCvtRnaTF32;
  char *args = nullptr;
  char *results = nullptr;
  Fiber fiber;
};
} // namespace tx::emulator

namespace {
struct BlockRun {
  const Kernel *kernel = nullptr;
  int block[3] = {0, 0, 0};
  int blockDim[3] = {1, 1, 1};
  int grid[3] = {1, 1, 1};
  void **params = nullptr;
  std::vector<ThreadState> threads;
  Fiber scheduler;
  uint64_t epoch = 0; // see currentEpoch()
};

uint64_t epochCounter = 0;

thread_local BlockRun *runningBlock = nullptr;
thread_local ThreadState *runningThread = nullptr;

constexpr size_t kFiberStackBytes = 64 * 1024;

void defaultHandler(const char *message) {
  std::fflush(stdout);
  std::fprintf(stderr, "tx-emulator: error: %s\n", message);
  std::fflush(stderr);
  std::_Exit(1);
}
ErrorHandler errorHandler = defaultHandler;

std::string triple(const int v[3]) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
         std::to_string(v[2]) + ")";
}

/// "threads 0-31, 64" for a sorted list of linear thread ids.
std::string ranges(const std::vector<int> &ids) {
  std::string s;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    if (!s.empty())
      s += ", ";
    s += std::to_string(ids[i]);
    if (j > i)
      s += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return s;
}

[[noreturn]] void fiberMain() {
  BlockRun *block = runningBlock;
  block->kernel->entry(block->params);
  runningThread->state = ThreadState::Done;
  switchFiber(runningThread->fiber, block->scheduler); // never resumed
  __builtin_unreachable();
}

void yieldToScheduler() {
  switchFiber(runningThread->fiber, runningBlock->scheduler);
}

std::string blockPrefix(const BlockRun &b) {
  return "kernel '" + b.kernel->name + "', block " + triple(b.block);
}

/// What every live thread waits at, grouped, for a deadlock report.
std::string describeWaits(const BlockRun &b) {
  std::map<std::string, std::vector<int>> groups;
  for (const ThreadState &t : b.threads) {
    std::string what;
    switch (t.state) {
    case ThreadState::Done:
      what = "have exited";
      break;
    case ThreadState::AtBarrier:
      what = "wait at barrier #" + std::to_string(t.site);
      break;
    case ThreadState::AtCollective:
      what = std::string("wait at warp-collective '") + intrinsicName(t.kind) +
             "' #" + std::to_string(t.site);
      break;
    case ThreadState::Runnable:
      what = "are runnable";
      break;
    }
    groups[what].push_back(t.linear);
  }
  std::string s;
  for (auto &[what, ids] : groups)
    s += "; threads " + ranges(ids) + " " + what;
  return s;
}

void runBlockInFibers(BlockRun &b) {
  static char *stacks = nullptr;
  static size_t stackThreads = 0;
  size_t n = b.threads.size();
  if (stackThreads < n) {
    std::free(stacks);
    stacks = static_cast<char *>(std::malloc(n * kFiberStackBytes));
    if (!stacks)
      reportError("cannot allocate fiber stacks for " + std::to_string(n) +
                  " threads");
    stackThreads = n;
  }
  for (size_t i = 0; i < n; ++i) {
    initFiber(b.threads[i].fiber, stacks + i * kFiberStackBytes,
              kFiberStackBytes, fiberMain);
  }
  Statistics &stats = mutableStatistics();
  while (true) {
    for (ThreadState &t : b.threads) {
      if (t.state != ThreadState::Runnable)
        continue;
      runningThread = &t;
      switchFiber(b.scheduler, t.fiber);
    }
    runningThread = nullptr;
    bool anyRunnable = false, allDone = true, allLiveAtBarrier = true,
         anyDone = false;
    int32_t site = -1;
    bool sameSite = true;
    for (ThreadState &t : b.threads) {
      anyRunnable |= t.state == ThreadState::Runnable;
      allDone &= t.state == ThreadState::Done;
      anyDone |= t.state == ThreadState::Done;
      if (t.state == ThreadState::AtBarrier) {
        sameSite &= site < 0 || site == t.site;
        site = t.site;
      } else if (t.state != ThreadState::Done) {
        allLiveAtBarrier = false;
      }
    }
    if (allDone)
      return;
    if (anyRunnable)
      continue;
    if (allLiveAtBarrier && sameSite && !anyDone) {
      for (ThreadState &t : b.threads)
        t.state = ThreadState::Runnable;
      b.epoch = ++epochCounter;
      ++stats.barriers;
      continue;
    }
    reportError(blockPrefix(b) + ": deadlock" + describeWaits(b));
    return;
  }
}
} // namespace

Statistics &tx::emulator::mutableStatistics() {
  static Statistics stats;
  return stats;
}

namespace {
/// TX_EMULATOR_STATS=1: the statistics on stderr at exit, so that a test
/// can tell which kinds of work a run exercised.
struct PrintStatisticsAtExit {
  PrintStatisticsAtExit() {
    const char *env = std::getenv("TX_EMULATOR_STATS");
    if (env && *env && std::strcmp(env, "0") != 0)
      std::atexit([] {
        Statistics s = statistics();
        std::fprintf(stderr,
                     "tx-emulator: %llu kernels, %llu blocks, %llu threads, "
                     "%llu barriers, %llu warp-collectives, %llu checked "
                     "accesses\n",
                     (unsigned long long)s.kernelsLaunched,
                     (unsigned long long)s.blocksRun,
                     (unsigned long long)s.threadsRun,
                     (unsigned long long)s.barriers,
                     (unsigned long long)s.warpCollectives,
                     (unsigned long long)s.checkedAccesses);
      });
  }
} printStatisticsAtExit;
} // namespace

Statistics tx::emulator::statistics() { return mutableStatistics(); }

ErrorHandler tx::emulator::setErrorHandler(ErrorHandler handler) {
  ErrorHandler old = errorHandler;
  errorHandler = handler ? handler : defaultHandler;
  return old;
}

void tx::emulator::reportError(const std::string &message) {
  // A handler may not return (the runner's jumps back to its caller): the
  // launch in progress is over either way.
  runningBlock = nullptr;
  runningThread = nullptr;
  endDeviceAccess();
  abandonStream();
  errorHandler(message.c_str());
}

extern "C" __attribute__((visibility("default"))) void
txEmulatorSetErrorHandler(void (*handler)(const char *)) {
  tx::emulator::setErrorHandler(handler);
}

uint64_t tx::emulator::currentEpoch() {
  return runningBlock ? runningBlock->epoch : 0;
}

int tx::emulator::currentThreadId() {
  return runningThread ? runningThread->linear : -1;
}

std::string tx::emulator::describeCurrentThread() {
  if (!runningBlock)
    return "host";
  std::string s = blockPrefix(*runningBlock);
  if (runningThread)
    s += ", thread " + triple(runningThread->tid);
  return s;
}

void tx::emulator::launch(Kernel *kernel, const intptr_t grid[3],
                          const intptr_t block[3], int32_t dynamicSharedBytes,
                          void **params, size_t numParams) {
  if (numParams != kernel->numParams)
    return reportError("mgpuLaunchKernel: kernel '" + kernel->name +
                       "' takes " + std::to_string(kernel->numParams) +
                       " parameters, the launch passes " +
                       std::to_string(numParams));
  if (dynamicSharedBytes != 0)
    return reportError("mgpuLaunchKernel: kernel '" + kernel->name +
                       "': dynamic shared memory is not implemented by the "
                       "emulated device");
  Statistics &stats = mutableStatistics();
  ++stats.kernelsLaunched;
  DeviceAccess access;
  BlockRun b;
  b.kernel = kernel;
  b.params = params;
  for (int d = 0; d < 3; ++d) {
    b.grid[d] = static_cast<int>(grid[d]);
    b.blockDim[d] = static_cast<int>(block[d]);
  }
  int threads = b.blockDim[0] * b.blockDim[1] * b.blockDim[2];
  b.threads.resize(threads);
  runningBlock = &b;
  for (int z = 0; z < b.grid[2]; ++z)
    for (int y = 0; y < b.grid[1]; ++y)
      for (int x = 0; x < b.grid[0]; ++x) {
        b.block[0] = x, b.block[1] = y, b.block[2] = z;
        resetSharedMemory(kernel->module);
        b.epoch = ++epochCounter;
        for (int i = 0; i < threads; ++i) {
          ThreadState &t = b.threads[i];
          t = ThreadState();
          t.linear = i;
          t.tid[0] = i % b.blockDim[0];
          t.tid[1] = (i / b.blockDim[0]) % b.blockDim[1];
          t.tid[2] = i / (b.blockDim[0] * b.blockDim[1]);
        }
        ++stats.blocksRun;
        stats.threadsRun += threads;
        if (kernel->needsFibers) {
          runBlockInFibers(b);
          continue;
        }
        for (ThreadState &t : b.threads) {
          runningThread = &t;
          kernel->entry(params);
        }
        runningThread = nullptr;
      }
  runningBlock = nullptr;
}

//===-- Entry points of the rewritten kernel IR ---------------------------===//

#define TX_EXPORT extern "C" __attribute__((visibility("default")))

TX_EXPORT int32_t __txemu_sreg(int32_t code) {
  const BlockRun &b = *runningBlock;
  const ThreadState &t = *runningThread;
  switch (code) {
  case kTidX: case kTidY: case kTidZ:
    return t.tid[code - kTidX];
  case kNtidX: case kNtidY: case kNtidZ:
    return b.blockDim[code - kNtidX];
  case kCtaidX: case kCtaidY: case kCtaidZ:
    return b.block[code - kCtaidX];
  case kNctaidX: case kNctaidY: case kNctaidZ:
    return b.grid[code - kNctaidX];
  case kLaneId:
    return t.linear % 32;
  case kWarpSize:
    return 32;
  case kWarpId:
    return t.linear / 32;
  }
  reportError("internal error: special register code " + std::to_string(code));
  return 0;
}

TX_EXPORT void __txemu_barrier(int32_t site) {
  if (!runningThread || !runningBlock->kernel->needsFibers)
    return reportError(describeCurrentThread() +
                       ": internal error: barrier outside a fiber");
  runningThread->state = ThreadState::AtBarrier;
  runningThread->site = site;
  yieldToScheduler();
}

TX_EXPORT void __txemu_intrinsic(int32_t kind, int32_t site, char *args,
                                 char *results) {
  IntrinsicKind k = static_cast<IntrinsicKind>(kind);
  if (!isWarpCollective(k))
    return executeThreadIntrinsic(k, args, results);
  BlockRun &b = *runningBlock;
  ThreadState &me = *runningThread;
  if (!b.kernel->needsFibers)
    return reportError(describeCurrentThread() +
                       ": internal error: warp-collective outside a fiber");
  int warp = me.linear / 32;
  int first = warp * 32;
  if (first + 32 > static_cast<int>(b.threads.size()))
    return reportError(describeCurrentThread() + ": warp-collective '" +
                       intrinsicName(k) + "' in a partial warp (the block has " +
                       std::to_string(b.threads.size()) +
                       " threads, not a multiple of 32)");
  me.state = ThreadState::AtCollective;
  me.site = site;
  me.kind = k;
  me.args = args;
  me.results = results;
  for (int l = 0; l < 32; ++l) {
    const ThreadState &t = b.threads[first + l];
    if (t.state != ThreadState::AtCollective)
      return yieldToScheduler(); // not the last lane: wait
  }
  char *laneArgs[32], *laneResults[32];
  for (int l = 0; l < 32; ++l) {
    ThreadState &t = b.threads[first + l];
    if (t.site != site || t.kind != k)
      return reportError(
          blockPrefix(b) + ": the lanes of warp " + std::to_string(warp) +
          " are at different warp-collective instructions ('" +
          intrinsicName(t.kind) + "' #" + std::to_string(t.site) + " and '" +
          intrinsicName(k) + "' #" + std::to_string(site) + ")");
    laneArgs[l] = t.args;
    laneResults[l] = t.results;
  }
  executeWarpCollective(k, laneArgs, laneResults);
  ++mutableStatistics().warpCollectives;
  for (int l = 0; l < 32; ++l)
    b.threads[first + l].state = ThreadState::Runnable;
}
