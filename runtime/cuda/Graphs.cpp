//===- Graphs.cpp - counters and CUDA graphs of the tx CUDA runtime -------===//
//
// The host code of tx-to-nvvm with cudagraph_mode = full brackets each call
// with txGpuGraphBegin(slot, key, captured) and txGpuGraphEnd(slot). The
// first call of a captured key captures its device work: the stream is put
// in capture mode (relaxed, so that the call's cuMemAlloc of the graph's
// buffers is allowed) at the call's first kernel launch, after the copies of
// its inputs, and End ends the capture, instantiates the graph and launches
// it. Later calls of the key get the graph's buffers back in the same order
// from their allocations (so the addresses in the graph are theirs), skip
// their launches and device-to-device copies, and End launches the graph:
// one cuGraphLaunch per call. Frees of the graph's buffers are kept for the
// next replay; txGpuGraphRelease (the module's unload) frees them. That
// bookkeeping is runtime/include/TxGpuGraphs.h, which the emulated device
// (runtime/emulator) runs too, where it is tested; what is here is the
// driver's part: the stream capture, instantiation and launch.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "TxGpuGraphs.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace tx::cuda::detail;

#define TX_EXPORT extern "C" __attribute__((visibility("default")))

Counters &tx::cuda::detail::counters() {
  static Counters c;
  return c;
}

namespace {
using namespace tx::gpu_graphs;

std::map<uintptr_t, uint64_t> &allocations() {
  static std::map<uintptr_t, uint64_t> live;
  return live;
}

struct Graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  size_t ops = 0; // launches and device copies in the graph
  std::vector<std::pair<void *, uint64_t>> buffers;
};

/// The driver's graphs under the shared logic (TxGpuGraphs.h).
struct DriverGraphs {
  using Graph = ::Graph;
  static void *allocate(uint64_t bytes) {
    const Driver *d = getDriver("mgpuMemAlloc");
    CUdeviceptr ptr = 0;
    if (!d || !check(d->cuMemAlloc(&ptr, bytes), "mgpuMemAlloc",
                     ("cuMemAlloc(" + std::to_string(bytes) + " bytes)").c_str()))
      return nullptr;
    void *p = reinterpret_cast<void *>(ptr);
    noteAllocation(p, bytes);
    return p;
  }
  static void free(void *p) {
    noteFree(p);
    if (const Driver *d = getDriver("txGpuGraphRelease"))
      check(d->cuMemFree(reinterpret_cast<CUdeviceptr>(p)),
            "txGpuGraphRelease", "cuMemFree");
  }
  static void abandon(Call<Graph> &c) {
    if (!c.capturing)
      return;
    if (const Driver *d = getDriver("txGpuGraphBegin")) {
      CUgraph partial = nullptr;
      d->cuStreamEndCapture(static_cast<CUstream>(c.stream), &partial);
      if (partial)
        d->cuGraphDestroy(partial);
    }
  }
  static void destroy(Graph &g) {
    const Driver *d = getDriver("txGpuGraphRelease");
    if (!d)
      return;
    if (g.exec)
      check(d->cuGraphExecDestroy(g.exec), "txGpuGraphRelease",
            "cuGraphExecDestroy");
    if (g.graph)
      check(d->cuGraphDestroy(g.graph), "txGpuGraphRelease", "cuGraphDestroy");
    g.exec = nullptr;
    g.graph = nullptr;
  }
  static bool finishCapture(Call<Graph> &c, Graph &g) {
    if (!c.capturing)
      return true; // no device work: nothing to launch
    const Driver *d = getDriver("txGpuGraphEnd");
    return d &&
           check(d->cuStreamEndCapture(static_cast<CUstream>(c.stream),
                                       &g.graph),
                 "txGpuGraphEnd", "cuStreamEndCapture") &&
           check(d->cuGraphInstantiate(&g.exec, g.graph, 0), "txGpuGraphEnd",
                 "cuGraphInstantiate");
  }
  static size_t operations(const Graph &g) { return g.ops; }
  static bool hasWork(const Graph &g) { return g.exec != nullptr; }
  static void launch(Call<Graph> &c, Graph &g) {
    if (const Driver *d = getDriver("txGpuGraphEnd"))
      check(d->cuGraphLaunch(g.exec, static_cast<CUstream>(c.stream)),
            "txGpuGraphEnd", "cuGraphLaunch");
  }
  static void error(const char *caller, const std::string &message) {
    reportError(caller, message);
  }
  static void count(Event e) { countEvent(counters(), e); }
};
using Graphs = GraphCalls<DriverGraphs>;
} // namespace

void tx::cuda::detail::noteAllocation(void *ptr, uint64_t bytes) {
  allocations()[reinterpret_cast<uintptr_t>(ptr)] = bytes;
  ++counters().allocations;
  counters().deviceBytesInUse += bytes;
}

void tx::cuda::detail::noteFree(void *ptr) {
  auto it = allocations().find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations().end())
    return;
  counters().deviceBytesInUse -= it->second;
  allocations().erase(it);
}

bool tx::cuda::detail::isDeviceMemory(const void *ptr) {
  uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  auto it = allocations().upper_bound(a);
  if (it == allocations().begin())
    return false;
  --it;
  return a < it->first + it->second;
}

bool tx::cuda::detail::graphTakesLaunch(CUstream stream) {
  Call<Graph> &c = Graphs::call();
  if (c.mode == Mode::Replaying) {
    ++c.nextOp;
    return true;
  }
  if (c.mode != Mode::Capturing)
    return false;
  if (!c.capturing) {
    const Driver *d = getDriver("mgpuLaunchKernel");
    if (!d || !check(d->cuStreamBeginCapture(stream,
                                             CU_STREAM_CAPTURE_MODE_RELAXED),
                     "mgpuLaunchKernel", "cuStreamBeginCapture"))
      return true;
    c.capturing = true;
    c.stream = stream;
  }
  ++c.capture.ops;
  return false; // issued into the capture
}

bool tx::cuda::detail::graphTakesCopy(CUstream stream, void *dst,
                                      const void *src) {
  Call<Graph> &c = Graphs::call();
  bool device = isDeviceMemory(dst) && isDeviceMemory(src);
  if (c.mode == Mode::Capturing && c.capturing) {
    if (!device) {
      reportError("mgpuMemcpy", "a copy between host and device memory inside "
                                "a captured call, after its first kernel");
      return true;
    }
    ++c.capture.ops;
    return false;
  }
  if (c.mode == Mode::Replaying && c.nextOp > 0) {
    if (!device) {
      reportError("mgpuMemcpy", "a copy between host and device memory inside "
                                "a replayed call, after its first kernel");
      return true;
    }
    ++c.nextOp;
    return true;
  }
  c.stream = stream;
  return false;
}

void *tx::cuda::detail::graphAllocation(uint64_t bytes) {
  return Graphs::allocation(bytes);
}

bool tx::cuda::detail::graphKeepsAllocation(void *ptr) {
  return Graphs::keepsAllocation(ptr);
}

TX_EXPORT void txGpuGraphBegin(void **slotAddress, int64_t key,
                               int32_t captured) {
  Graphs::begin(slotAddress, key, captured);
}

TX_EXPORT void txGpuGraphEnd(void ** /*slotAddress*/) { Graphs::end(); }

TX_EXPORT void txGpuGraphRelease(void **slotAddress) {
  Graphs::release(slotAddress);
}

TX_EXPORT uint64_t txGpuCounter(const char *name) {
  if (!name)
    return UINT64_MAX;
  const Counters &c = counters();
  std::string n(name);
  if (n == "bytes_h2d")
    return c.bytesHostToDevice;
  if (n == "bytes_d2h")
    return c.bytesDeviceToHost;
  if (n == "bytes_d2d")
    return c.bytesDeviceToDevice;
  if (n == "launches")
    return c.launches;
  if (n == "graph_launches")
    return c.graphLaunches;
  if (n == "graphs_captured")
    return c.graphsCaptured;
  if (n == "eager_calls")
    return c.eagerCalls;
  if (n == "syncs")
    return c.syncs;
  if (n == "allocations")
    return c.allocations;
  if (n == "device_bytes_in_use")
    return c.deviceBytesInUse;
  return UINT64_MAX;
}

TX_EXPORT void txGpuWeightsReleased() {
  reportError("txGpuWeightsReleased",
              "a function of the module was called after its device-resident "
              "weights were released (the module was unloaded)");
}
