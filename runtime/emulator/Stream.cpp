//===- Stream.cpp - the emulated device's stream: work runs asynchronously -===//
//
// On a GPU, kernel launches, copies, memsets and stream-ordered frees
// return before they run; the host sees their effect only after it
// synchronises. The emulated device does the same: the host code's work
// goes into one in-order queue, run when the host synchronises
// (mgpuStreamSynchronize, mgpuEventSynchronize), before a graph launch or
// a module unload, and where CUDA itself blocks: a copy to pageable host
// memory (memory the device does not know) completes before its call
// returns, and a copy from it takes the data at the call (CUDA stages
// it). So host code that reads a copy's destination in registered (pinned)
// memory, or reuses its source, before synchronising sees what a GPU may
// show: the memory before the copy.
//
// Checks are made twice: at the call (null pointers, ranges against what
// is live then) and when the work runs (a free earlier in the queue has run
// by then).
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"
#include "TxEmulator.h"

#include <cstdlib>
#include <cstring>
#include <deque>

using namespace tx::emulator;

namespace {
std::deque<DeviceOp> &queue() {
  static std::deque<DeviceOp> q;
  return q;
}

bool deferring() {
  static bool on = [] {
    const char *env = std::getenv("TX_EMULATOR_SYNC");
    return !(env && std::strcmp(env, "1") == 0);
  }();
  return on;
}

/// Device memory or host memory registered with the device.
bool deviceVisible(const void *p) {
  return isDeviceMemory(p) || isRegisteredHostMemory(p);
}

void enqueue(DeviceOp op) {
  if (!deferring())
    return runDeviceOp(op);
  queue().push_back(std::move(op));
}
} // namespace

DeviceOp DeviceOp::launchOf(Kernel *kernel, const intptr_t grid[3],
                            const intptr_t block[3], int32_t smem,
                            void **params) {
  DeviceOp op;
  op.kind = Launch;
  op.kernel = kernel;
  for (int d = 0; d < 3; ++d) {
    op.grid[d] = grid[d];
    op.block[d] = block[d];
  }
  op.smem = smem;
  // The arguments are read at the call: the host may reuse them at once.
  for (size_t i = 0; i < kernel->paramBytes.size(); ++i) {
    const char *p = static_cast<const char *>(params[i]);
    op.params.emplace_back(p, p + kernel->paramBytes[i]);
  }
  return op;
}

DeviceOp DeviceOp::copyOf(void *dst, const void *src, size_t bytes) {
  DeviceOp op;
  op.kind = Copy;
  op.dst = dst;
  op.src = src;
  op.bytes = bytes;
  return op;
}

DeviceOp DeviceOp::memsetOf(void *dst, uint32_t value, size_t count,
                            int width) {
  DeviceOp op;
  op.kind = Memset;
  op.dst = dst;
  op.bytes = count;
  op.value = value;
  op.width = width;
  return op;
}

void tx::emulator::runDeviceOp(const DeviceOp &op) {
  switch (op.kind) {
  case DeviceOp::Launch: {
    std::vector<void *> params;
    for (const std::vector<char> &p : op.params)
      params.push_back(const_cast<char *>(p.data()));
    launch(op.kernel, op.grid, op.block, op.smem, params.data(),
           params.size());
    return;
  }
  case DeviceOp::Copy: {
    const void *src = op.staged.empty() ? op.src : op.staged.data();
    if (!checkTransfer(op.dst, op.bytes, "mgpuMemcpy destination") ||
        (op.staged.empty() &&
         !checkTransfer(op.src, op.bytes, "mgpuMemcpy source")))
      return;
    DeviceAccess access;
    std::memmove(op.dst, src, op.bytes);
    return;
  }
  case DeviceOp::Memset: {
    const char *what = op.width == 4 ? "mgpuMemset32 destination"
                                     : "mgpuMemset16 destination";
    if (!checkTransfer(op.dst, op.bytes * op.width, what))
      return;
    DeviceAccess access;
    for (size_t i = 0; i < op.bytes; ++i) {
      if (op.width == 4)
        static_cast<uint32_t *>(op.dst)[i] = op.value;
      else
        static_cast<uint16_t *>(op.dst)[i] = static_cast<uint16_t>(op.value);
    }
    return;
  }
  case DeviceOp::Free:
    freeDeviceMemory(op.dst);
    return;
  }
}


void tx::emulator::streamLaunch(Kernel *kernel, const intptr_t grid[3],
                                const intptr_t block[3], int32_t smem,
                                void **params) {
  enqueue(DeviceOp::launchOf(kernel, grid, block, smem, params));
}

void tx::emulator::streamCopy(void *dst, const void *src, size_t bytes) {
  DeviceOp op = DeviceOp::copyOf(dst, src, bytes);
  if (!deviceVisible(dst)) {
    // To pageable host memory: complete when the call returns.
    synchronizeStream();
    return runDeviceOp(op);
  }
  if (!deviceVisible(src))
    op.staged.assign(static_cast<const char *>(src),
                     static_cast<const char *>(src) + bytes);
  enqueue(std::move(op));
}

void tx::emulator::streamMemset(void *dst, uint32_t value, size_t count,
                                int width) {
  enqueue(DeviceOp::memsetOf(dst, value, count, width));
}

void tx::emulator::streamFree(void *ptr) {
  // In stream order (cudaFreeAsync): after the work that may still use it.
  if (queue().empty())
    return freeDeviceMemory(ptr);
  DeviceOp op;
  op.kind = DeviceOp::Free;
  op.dst = ptr;
  enqueue(std::move(op));
}

void tx::emulator::synchronizeStream() {
  auto &q = queue();
  while (!q.empty()) {
    DeviceOp op = std::move(q.front());
    q.pop_front();
    runDeviceOp(op);
  }
}

void tx::emulator::abandonStream() { queue().clear(); }
