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
// next replay; txGpuGraphRelease (the module's unload) frees them. The same
// logic runs, and is tested, on the emulated device (runtime/emulator).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

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

struct Slot {
  std::map<int64_t, Graph> graphs;
  std::set<int64_t> noticed;
};

enum class Mode { None, Eager, Capturing, Replaying };
struct Call {
  Mode mode = Mode::None;
  Slot *slot = nullptr;
  int64_t key = 0;
  bool capturing = false; // the stream is in capture mode
  CUstream stream = nullptr;
  Graph capture;
  Graph *graph = nullptr;
  size_t nextBuffer = 0, nextOp = 0;
};
thread_local Call call;

std::set<void *> &graphBuffers() {
  static std::set<void *> buffers;
  return buffers;
}

void destroy(Graph &g) {
  const Driver *d = getDriver("txGpuGraphRelease");
  if (d) {
    if (g.exec)
      check(d->cuGraphExecDestroy(g.exec), "txGpuGraphRelease",
            "cuGraphExecDestroy");
    if (g.graph)
      check(d->cuGraphDestroy(g.graph), "txGpuGraphRelease", "cuGraphDestroy");
    for (auto &[p, bytes] : g.buffers) {
      graphBuffers().erase(p);
      noteFree(p);
      check(d->cuMemFree(reinterpret_cast<CUdeviceptr>(p)),
            "txGpuGraphRelease", "cuMemFree");
    }
  }
  g = Graph();
}
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
  if (call.mode == Mode::Replaying) {
    ++call.nextOp;
    return true;
  }
  if (call.mode != Mode::Capturing)
    return false;
  if (!call.capturing) {
    const Driver *d = getDriver("mgpuLaunchKernel");
    if (!d || !check(d->cuStreamBeginCapture(stream,
                                             CU_STREAM_CAPTURE_MODE_RELAXED),
                     "mgpuLaunchKernel", "cuStreamBeginCapture"))
      return true;
    call.capturing = true;
    call.stream = stream;
  }
  ++call.capture.ops;
  return false; // issued into the capture
}

bool tx::cuda::detail::graphTakesCopy(CUstream stream, void *dst,
                                      const void *src) {
  bool device = isDeviceMemory(dst) && isDeviceMemory(src);
  if (call.mode == Mode::Capturing && call.capturing) {
    if (!device) {
      reportError("mgpuMemcpy", "a copy between host and device memory inside "
                                "a captured call, after its first kernel");
      return true;
    }
    ++call.capture.ops;
    return false;
  }
  if (call.mode == Mode::Replaying && call.nextOp > 0) {
    if (!device) {
      reportError("mgpuMemcpy", "a copy between host and device memory inside "
                                "a replayed call, after its first kernel");
      return true;
    }
    ++call.nextOp;
    return true;
  }
  call.stream = stream;
  return false;
}

void *tx::cuda::detail::graphAllocation(uint64_t bytes) {
  if (call.mode == Mode::Capturing) {
    const Driver *d = getDriver("mgpuMemAlloc");
    CUdeviceptr ptr = 0;
    if (!d || !check(d->cuMemAlloc(&ptr, bytes), "mgpuMemAlloc",
                     ("cuMemAlloc(" + std::to_string(bytes) + " bytes)").c_str()))
      return nullptr;
    void *p = reinterpret_cast<void *>(ptr);
    noteAllocation(p, bytes);
    call.capture.buffers.push_back({p, bytes});
    graphBuffers().insert(p);
    return p;
  }
  if (call.mode == Mode::Replaying) {
    if (call.nextBuffer >= call.graph->buffers.size() ||
        call.graph->buffers[call.nextBuffer].second != bytes) {
      reportError("mgpuMemAlloc", "graph replay (token count " +
                                      std::to_string(call.key) +
                                      "): allocation #" +
                                      std::to_string(call.nextBuffer) +
                                      " is not the captured graph's");
      return nullptr;
    }
    return call.graph->buffers[call.nextBuffer++].first;
  }
  return nullptr;
}

bool tx::cuda::detail::graphKeepsAllocation(void *ptr) {
  return graphBuffers().count(ptr) != 0;
}

TX_EXPORT void txGpuGraphBegin(void **slotAddress, int64_t key,
                               int32_t captured) {
  if (call.mode == Mode::Capturing) {
    // A call that failed half-way: its capture is abandoned.
    if (call.capturing)
      if (const Driver *d = getDriver("txGpuGraphBegin")) {
        CUgraph partial = nullptr;
        d->cuStreamEndCapture(call.stream, &partial);
        if (partial)
          d->cuGraphDestroy(partial);
      }
    destroy(call.capture);
  }
  call = Call();
  if (!slotAddress) {
    reportError("txGpuGraphBegin", "null graph slot");
    return;
  }
  if (!*slotAddress)
    *slotAddress = new Slot();
  call.slot = static_cast<Slot *>(*slotAddress);
  call.key = key;
  if (!captured) {
    call.mode = Mode::Eager;
    ++counters().eagerCalls;
    if (call.slot->noticed.insert(key).second)
      std::fprintf(stderr,
                   "tx-gpu: cudagraph_mode = full: token count %lld is not "
                   "one of the capture sizes; launched eagerly\n",
                   static_cast<long long>(key));
    return;
  }
  auto it = call.slot->graphs.find(key);
  if (it == call.slot->graphs.end()) {
    call.mode = Mode::Capturing;
  } else {
    call.mode = Mode::Replaying;
    call.graph = &it->second;
  }
}

TX_EXPORT void txGpuGraphEnd(void ** /*slotAddress*/) {
  Mode mode = call.mode;
  call.mode = Mode::None;
  if (mode != Mode::Capturing && mode != Mode::Replaying)
    return;
  const Driver *d = getDriver("txGpuGraphEnd");
  if (!d)
    return;
  if (mode == Mode::Capturing) {
    Graph &g = call.slot->graphs[call.key];
    g = std::move(call.capture);
    call.capture = Graph();
    call.graph = &g;
    ++counters().graphsCaptured;
    if (!call.capturing)
      return; // no device work to replay
    if (!check(d->cuStreamEndCapture(call.stream, &g.graph), "txGpuGraphEnd",
               "cuStreamEndCapture") ||
        !check(d->cuGraphInstantiate(&g.exec, g.graph, 0), "txGpuGraphEnd",
               "cuGraphInstantiate"))
      return;
  } else if (call.nextOp != call.graph->ops) {
    reportError("txGpuGraphEnd",
                "graph replay (token count " + std::to_string(call.key) +
                    "): the call issued " + std::to_string(call.nextOp) +
                    " of the graph's " + std::to_string(call.graph->ops) +
                    " operations");
    return;
  }
  if (!call.graph->exec)
    return;
  ++counters().graphLaunches;
  check(d->cuGraphLaunch(call.graph->exec, call.stream), "txGpuGraphEnd",
        "cuGraphLaunch");
}

TX_EXPORT void txGpuGraphRelease(void **slotAddress) {
  if (!slotAddress || !*slotAddress)
    return;
  auto *slot = static_cast<Slot *>(*slotAddress);
  for (auto &[key, graph] : slot->graphs)
    destroy(graph);
  delete slot;
  *slotAddress = nullptr;
  call = Call();
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
