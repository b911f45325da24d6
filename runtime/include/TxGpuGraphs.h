//===- TxGpuGraphs.h - CUDA-graph bookkeeping of the tx GPU runtimes -*- C++ -*-===//
//
// The host code of tx-to-nvvm with cudagraph_mode = full brackets each call
// of a function with txGpuGraphBegin(slot, key, captured) and
// txGpuGraphEnd(slot) (key: the call's token count; captured: whether it is
// a capture size). What follows is the one copy of the logic both runtimes
// run (runtime/cuda on the driver's graphs, runtime/emulator on its records,
// so the emulator's tests test the CUDA runtime's bookkeeping):
//
// - a key that is not captured runs eagerly, with a notice, once per key;
// - the first call of a captured key captures: its allocations become the
//   graph's buffers (the call's frees keep them), End finishes the capture
//   and launches the graph;
// - later calls of the key replay: their allocations get the graph's
//   buffers back in the same order (so the addresses the graph holds are
//   theirs), their device work is checked against and counted for the
//   graph instead of being issued (the backend's launch/copy hooks, which
//   advance `nextOp`), and End launches the graph once;
// - a call that failed half-way abandons its capture at the next Begin;
// - txGpuGraphRelease (the module's unload) destroys the graphs and frees
//   their buffers.
//
// A backend B provides:
//   using Graph = ...;  // with std::vector<std::pair<void *, uint64_t>> buffers
//   static void *allocate(uint64_t bytes);   // device memory, null on error
//   static void free(void *ptr);
//   static void abandon(Call<Graph> &call);  // a capture left half-way
//   static void destroy(Graph &graph);       // its device objects, not buffers
//   static bool finishCapture(Call<Graph> &call, Graph &graph);
//   static size_t operations(const Graph &graph);  // what a replay must issue
//   static bool hasWork(const Graph &graph);       // anything to launch
//   static void launch(Call<Graph> &call, Graph &graph);
//   static void error(const char *caller, const std::string &message);
//   static void count(Event event);
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_INCLUDE_TXGPUGRAPHS_H
#define TX_RUNTIME_INCLUDE_TXGPUGRAPHS_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace tx::gpu_graphs {

enum class Mode { None, Eager, Capturing, Replaying };
enum class Event { EagerCall, GraphCaptured, GraphLaunch };

/// Counts `e` in a backend's counters (any struct with these three fields).
template <typename Counters> void countEvent(Counters &c, Event e) {
  switch (e) {
  case Event::EagerCall:
    ++c.eagerCalls;
    return;
  case Event::GraphCaptured:
    ++c.graphsCaptured;
    return;
  case Event::GraphLaunch:
    ++c.graphLaunches;
    return;
  }
}

/// The graphs of one function of a module (the module's slot points here).
template <typename Graph> struct Slot {
  std::map<int64_t, Graph> graphs;
  std::set<int64_t> noticed;
};

/// The call between txGpuGraphBegin and txGpuGraphEnd.
template <typename Graph> struct Call {
  Mode mode = Mode::None;
  Slot<Graph> *slot = nullptr;
  int64_t key = 0;
  Graph capture;          // while capturing
  Graph *graph = nullptr; // while replaying, and after End
  size_t nextBuffer = 0, nextOp = 0;
  /// Backend state of the call (e.g. whether the stream is capturing).
  bool capturing = false;
  void *stream = nullptr;

  std::string keyText() const { return "token count " + std::to_string(key); }
};

template <typename B> struct GraphCalls {
  using Graph = typename B::Graph;

  static Call<Graph> &call() {
    static thread_local Call<Graph> c;
    return c;
  }

  /// The buffers of every graph (captured or being captured): the host code
  /// frees them at the end of each call, the graph keeps them.
  static std::set<void *> &buffers() {
    static std::set<void *> all;
    return all;
  }

  static void discard(Graph &g) {
    B::destroy(g);
    for (auto &[p, bytes] : g.buffers) {
      buffers().erase(p);
      B::free(p);
    }
    g = Graph();
  }

  static void begin(void **slotAddress, int64_t key, int32_t captured) {
    Call<Graph> &c = call();
    // A call that failed half-way (an error ended it) leaves its capture.
    if (c.mode == Mode::Capturing) {
      B::abandon(c);
      discard(c.capture);
    }
    c = Call<Graph>();
    if (!slotAddress)
      return B::error("txGpuGraphBegin", "null graph slot");
    if (!*slotAddress)
      *slotAddress = new Slot<Graph>();
    c.slot = static_cast<Slot<Graph> *>(*slotAddress);
    c.key = key;
    if (!captured) {
      c.mode = Mode::Eager;
      B::count(Event::EagerCall);
      if (c.slot->noticed.insert(key).second)
        std::fprintf(stderr,
                     "tx-gpu: cudagraph_mode = full: token count %lld is not "
                     "one of the capture sizes; launched eagerly\n",
                     static_cast<long long>(key));
      return;
    }
    auto it = c.slot->graphs.find(key);
    if (it == c.slot->graphs.end()) {
      c.mode = Mode::Capturing;
    } else {
      c.mode = Mode::Replaying;
      c.graph = &it->second;
    }
  }

  static void end() {
    Call<Graph> &c = call();
    Mode mode = c.mode;
    c.mode = Mode::None;
    if (mode == Mode::Capturing) {
      B::count(Event::GraphCaptured);
      Graph &g = c.slot->graphs[c.key];
      g = std::move(c.capture);
      c.capture = Graph();
      c.graph = &g;
      if (!B::finishCapture(c, g))
        return;
    } else if (mode == Mode::Replaying) {
      size_t expected = B::operations(*c.graph);
      if (c.nextOp != expected)
        return B::error("txGpuGraphEnd",
                        "graph replay (" + c.keyText() + "): the call issued " +
                            std::to_string(c.nextOp) + " of the graph's " +
                            std::to_string(expected) + " operations");
    } else {
      return;
    }
    if (!B::hasWork(*c.graph))
      return;
    B::count(Event::GraphLaunch);
    B::launch(c, *c.graph);
  }

  static void release(void **slotAddress) {
    if (!slotAddress || !*slotAddress)
      return;
    auto *slot = static_cast<Slot<Graph> *>(*slotAddress);
    for (auto &[key, graph] : slot->graphs)
      discard(graph);
    delete slot;
    *slotAddress = nullptr;
    call() = Call<Graph>();
  }

  /// A graphed call's allocation: a new buffer of the graph being captured,
  /// or the replayed graph's next one; null when the call is not graphed
  /// (or on error, reported).
  static void *allocation(uint64_t bytes) {
    Call<Graph> &c = call();
    if (c.mode == Mode::Capturing) {
      void *p = B::allocate(bytes);
      if (p) {
        c.capture.buffers.push_back({p, bytes});
        buffers().insert(p);
      }
      return p;
    }
    if (c.mode == Mode::Replaying) {
      if (c.nextBuffer >= c.graph->buffers.size() ||
          c.graph->buffers[c.nextBuffer].second != bytes) {
        B::error("mgpuMemAlloc", "graph replay (" + c.keyText() +
                                     "): allocation #" +
                                     std::to_string(c.nextBuffer) + " of " +
                                     std::to_string(bytes) +
                                     " bytes is not the captured graph's");
        return nullptr;
      }
      return c.graph->buffers[c.nextBuffer++].first;
    }
    return nullptr;
  }

  /// Whether a free of `ptr` is to be skipped (a graph's buffer).
  static bool keepsAllocation(void *ptr) { return buffers().count(ptr) != 0; }
};

} // namespace tx::gpu_graphs

#endif // TX_RUNTIME_INCLUDE_TXGPUGRAPHS_H
