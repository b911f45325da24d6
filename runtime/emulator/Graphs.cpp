//===- Graphs.cpp - device memory and CUDA graphs of the emulated device --===//
//
// Device memory: host memory the device tracks, within the limit
// TX_EMULATOR_MEMORY (bytes) so that running out of device memory can be
// tested.
//
// CUDA graphs, as the host code of tx-to-nvvm drives them with
// cudagraph_mode = full: txGpuGraphBegin(slot, key, captured) opens a call,
// txGpuGraphEnd(slot) closes it. The first call of a captured key records
// the device work between the two (kernel launches with a copy of their
// parameters, device-to-device copies and memsets) instead of running it,
// and the call's allocations become the graph's buffers; End then launches
// the graph: executes the record. Later calls of the key replay it: the
// host code's launches are checked against the record and not run, its
// allocations get the graph's buffers back in the same order (so the
// addresses baked into the record are the call's), its frees keep them,
// and End executes the record again. Copies between host and device
// before the call's first kernel (its inputs) run eagerly, outside the
// graph; after End (its results), too. A key that is not captured runs
// eagerly, with a notice. The bookkeeping (modes, keys, buffers, notices,
// the replay's operation count) is runtime/include/TxGpuGraphs.h, the code
// runtime/cuda runs around cuStreamBeginCapture .. cuGraphLaunch: here it
// is executed where it can be tested; what is the emulator's own is the
// record and its execution.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"
#include "TxEmulator.h"
#include "TxGpuGraphs.h"

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>

#include <sys/mman.h>
#include <unistd.h>

using namespace tx::emulator;

//===-- Device memory -----------------------------------------------------===//

namespace {
uint64_t memoryLimit() {
  static uint64_t limit = [] {
    const char *env = std::getenv("TX_EMULATOR_MEMORY");
    if (!env || !*env)
      return UINT64_MAX;
    char *end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    return end && *end == 0 ? static_cast<uint64_t>(v) : UINT64_MAX;
  }();
  return limit;
}

std::map<void *, uint64_t> &liveAllocations() {
  static std::map<void *, uint64_t> live;
  return live;
}

/// Freed allocations whose memory is held back (inaccessible), oldest
/// first, up to kQuarantineBytes and kQuarantineBlocks (the newest is
/// always held).
struct Quarantine {
  std::deque<std::pair<void *, uint64_t>> blocks;
  uint64_t bytes = 0;
};
constexpr uint64_t kQuarantineBytes = 256ull << 20;
constexpr size_t kQuarantineBlocks = 4096;
Quarantine &quarantine() {
  static Quarantine q;
  return q;
}

//===-- Host access to device memory faults --------------------------------===//

/// Open DeviceAccess scopes (the host thread's: the device works in order).
int accessDepth = 0;

bool protectionEnabled() {
  static bool enabled = [] {
    const char *env = std::getenv("TX_EMULATOR_PROTECT");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return enabled;
}

uint64_t mappedBytes(uint64_t bytes) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

/// Live device memory, all with one protection. Freed memory held back
/// stays inaccessible: the device's own checks report a use of it before
/// they would touch it.
void protectDeviceMemory(int prot) {
  if (!protectionEnabled())
    return;
  for (auto &[p, bytes] : liveAllocations())
    ::mprotect(p, mappedBytes(bytes), prot);
}

/// The device allocation (live or freed) holding `a`: its start and size.
bool findDeviceAllocation(uintptr_t a, uintptr_t &start, uint64_t &bytes,
                          bool &freed) {
  auto within = [&](void *p, uint64_t n) {
    auto s = reinterpret_cast<uintptr_t>(p);
    return a >= s && a < s + mappedBytes(n);
  };
  auto &live = liveAllocations();
  auto it = live.upper_bound(reinterpret_cast<void *>(a));
  if (it != live.begin() && within(std::prev(it)->first, std::prev(it)->second)) {
    start = reinterpret_cast<uintptr_t>(std::prev(it)->first);
    bytes = std::prev(it)->second;
    freed = false;
    return true;
  }
  for (auto &[p, n] : quarantine().blocks)
    if (within(p, n)) {
      start = reinterpret_cast<uintptr_t>(p);
      bytes = n;
      freed = true;
      return true;
    }
  return false;
}

struct sigaction previousSegv;

/// A fault on device memory outside a DeviceAccess scope (the host code
/// loaded or stored it), or on freed device memory. Reported as a device error (the runner's handler
/// jumps back to its caller; SA_NODEFER keeps SIGSEGV unblocked after the
/// jump). Any other fault goes to the handler that was there before.
void onSegv(int sig, siginfo_t *info, void *context) {
  uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr), start = 0;
  uint64_t bytes = 0;
  bool freed = false;
  if (findDeviceAllocation(a, start, bytes, freed) &&
      (freed || accessDepth == 0)) {
    char message[320];
    std::snprintf(message, sizeof(message),
                  "host code accessed device memory at 0x%" PRIxPTR
                  " (offset %" PRIu64 " of the %" PRIu64
                  "-byte %sdevice allocation at 0x%" PRIxPTR
                  "): a GPU's device memory is not host-accessible; copy it "
                  "with gpu.memcpy",
                  a, static_cast<uint64_t>(a - start), bytes,
                  freed ? "freed " : "", start);
    reportError(message);
  }
  if (previousSegv.sa_flags & SA_SIGINFO) {
    if (previousSegv.sa_sigaction) {
      previousSegv.sa_sigaction(sig, info, context);
      return;
    }
  } else if (previousSegv.sa_handler != SIG_DFL &&
             previousSegv.sa_handler != SIG_IGN) {
    previousSegv.sa_handler(sig);
    return;
  }
  // The default action: returning re-runs the access, which faults again.
  ::sigaction(SIGSEGV, &previousSegv, nullptr);
}

void *mapDeviceMemory(uint64_t bytes) {
  static bool installed = [] {
    if (!protectionEnabled())
      return false;
    struct sigaction action = {};
    action.sa_sigaction = onSegv;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGSEGV, &action, &previousSegv) == 0;
  }();
  (void)installed;
  int prot = !protectionEnabled() || accessDepth > 0 ? PROT_READ | PROT_WRITE
                                                     : PROT_NONE;
  void *p = ::mmap(nullptr, mappedBytes(bytes), prot,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
} // namespace

void *tx::emulator::allocateDeviceMemory(uint64_t bytes) {
  Statistics &stats = mutableStatistics();
  uint64_t limit = memoryLimit();
  if (stats.deviceBytesInUse + bytes > limit || bytes > limit) {
    reportError("mgpuMemAlloc: out of device memory: " +
                std::to_string(bytes) + " bytes requested, " +
                std::to_string(stats.deviceBytesInUse) + " of " +
                std::to_string(limit) +
                " bytes in use (TX_EMULATOR_MEMORY)");
    return nullptr;
  }
  void *p = mapDeviceMemory(bytes);
  if (!p) {
    reportError("mgpuMemAlloc: out of memory allocating " +
                std::to_string(bytes) + " bytes");
    return nullptr;
  }
  addRegion(p, bytes, RegionKind::DeviceAlloc);
  liveAllocations()[p] = bytes;
  stats.deviceBytesInUse += bytes;
  ++stats.allocations;
  return p;
}

void tx::emulator::freeDeviceMemory(void *ptr) {
  auto it = liveAllocations().find(ptr);
  if (it == liveAllocations().end())
    return reportError("mgpuMemFree: pointer is not a live device allocation");
  uint64_t bytes = it->second;
  // Held back, not returned: a kernel, copy or memset that uses the memory
  // after its free is reported (instead of reading whatever was there), and
  // what escapes the checks reads NaN (0xff bytes). Only this block is
  // opened for the fill (not every live allocation, as a DeviceAccess
  // scope would).
  if (protectionEnabled() && accessDepth == 0)
    ::mprotect(ptr, mappedBytes(bytes), PROT_READ | PROT_WRITE);
  std::memset(ptr, 0xff, bytes);
  mutableStatistics().deviceBytesInUse -= bytes;
  liveAllocations().erase(it);
  if (protectionEnabled())
    ::mprotect(ptr, mappedBytes(bytes), PROT_NONE);
  retireRegion(ptr);
  auto &held = quarantine();
  held.bytes += bytes;
  held.blocks.emplace_back(ptr, bytes);
  while ((held.bytes > kQuarantineBytes ||
          held.blocks.size() > kQuarantineBlocks) &&
         held.blocks.size() > 1) {
    auto [oldest, oldestBytes] = held.blocks.front();
    held.blocks.pop_front();
    held.bytes -= oldestBytes;
    removeRegion(oldest);
    ::munmap(oldest, mappedBytes(oldestBytes));
  }
}

DeviceAccess::DeviceAccess() {
  if (accessDepth++ == 0)
    protectDeviceMemory(PROT_READ | PROT_WRITE);
}

DeviceAccess::~DeviceAccess() {
  if (accessDepth > 0 && --accessDepth == 0)
    protectDeviceMemory(PROT_NONE);
}

void tx::emulator::endDeviceAccess() {
  if (accessDepth == 0)
    return;
  accessDepth = 0;
  protectDeviceMemory(PROT_NONE);
}

//===-- Graphs --------------------------------------------------------------===//

namespace {
using namespace tx::gpu_graphs;

struct Graph {
  std::vector<DeviceOp> ops;
  std::vector<std::pair<void *, uint64_t>> buffers;
};

/// The emulated device under the shared graph logic (TxGpuGraphs.h): a
/// graph is the record of the captured call, its launch executes it.
struct EmulatedGraphs {
  using Graph = ::Graph;
  static void *allocate(uint64_t bytes) { return allocateDeviceMemory(bytes); }
  static void free(void *ptr) { freeDeviceMemory(ptr); }
  static void abandon(Call<Graph> &) {}
  static void destroy(Graph &) {}
  static bool finishCapture(Call<Graph> &, Graph &) { return true; }
  static size_t operations(const Graph &g) { return g.ops.size(); }
  static bool hasWork(const Graph &) { return true; }
  static void launch(Call<Graph> &, Graph &g) {
    synchronizeStream(); // the call's inputs, copied in before the graph
    DeviceAccess access;
    for (const DeviceOp &op : g.ops)
      runDeviceOp(op);
  }
  static void error(const char *caller, const std::string &message) {
    reportError(std::string(caller) + ": " + message);
  }
  static void count(Event e) { countEvent(mutableStatistics(), e); }
};
using Graphs = GraphCalls<EmulatedGraphs>;

Call<Graph> &call() { return Graphs::call(); }

/// Replaying: the host code's next operation must be the recorded one.
const DeviceOp *nextRecorded(DeviceOp::Kind kind, const char *what) {
  Call<Graph> &c = call();
  if (c.nextOp >= c.graph->ops.size() ||
      c.graph->ops[c.nextOp].kind != kind) {
    reportError(std::string("graph replay (") + c.keyText() +
                "): the call issued a " + what + " where the captured graph "
                "has " +
                (c.nextOp >= c.graph->ops.size() ? "nothing more"
                                                 : "another operation"));
    return nullptr;
  }
  return &c.graph->ops[c.nextOp++];
}
} // namespace

bool tx::emulator::graphTakesLaunch(Kernel *kernel, const intptr_t grid[3],
                                    const intptr_t block[3], int32_t smem,
                                    void **params) {
  Call<Graph> &c = call();
  if (c.mode == Mode::Capturing) {
    DeviceOp r = DeviceOp::launchOf(kernel, grid, block, smem, params);
    c.capture.ops.push_back(std::move(r));
    return true;
  }
  if (c.mode == Mode::Replaying) {
    const DeviceOp *r = nextRecorded(DeviceOp::Launch, "kernel launch");
    if (!r)
      return true;
    bool same = r->kernel == kernel && r->smem == smem;
    for (int d = 0; d < 3; ++d)
      same = same && r->grid[d] == grid[d] && r->block[d] == block[d];
    for (size_t i = 0; same && i < kernel->paramBytes.size(); ++i)
      same = std::memcmp(r->params[i].data(), params[i],
                         kernel->paramBytes[i]) == 0;
    if (!same)
      reportError("graph replay (" + c.keyText() + "): launch of '" +
                  kernel->name +
                  "' differs from the captured one (its grid, block or "
                  "parameters)");
    return true;
  }
  return false;
}

bool tx::emulator::graphTakesCopy(void *dst, const void *src, size_t bytes) {
  Call<Graph> &c = call();
  if (c.mode != Mode::Capturing && c.mode != Mode::Replaying)
    return false;
  if (!isDeviceMemory(dst) || !isDeviceMemory(src)) {
    // The call's inputs, copied in before its first kernel: outside the
    // graph (as a capture begun at the first launch leaves them).
    bool first = c.mode == Mode::Capturing ? c.capture.ops.empty()
                                           : c.nextOp == 0;
    if (first)
      return false;
    reportError("mgpuMemcpy: a copy between host and device memory inside a "
                "captured call (" +
                c.keyText() +
                ") after its first kernel: a graph would replay it from the same host "
                "address");
    return true;
  }
  if (c.mode == Mode::Capturing) {
    DeviceOp r = DeviceOp::copyOf(dst, src, bytes);
    c.capture.ops.push_back(std::move(r));
  } else if (const DeviceOp *r = nextRecorded(DeviceOp::Copy, "copy")) {
    if (r->dst != dst || r->src != src || r->bytes != bytes)
      reportError("graph replay (" + c.keyText() +
                  "): a copy differs from the captured one");
  }
  return true;
}

bool tx::emulator::graphTakesMemset(void *dst, uint32_t value, size_t count,
                                    int width) {
  Call<Graph> &c = call();
  if (c.mode == Mode::Capturing) {
    DeviceOp r = DeviceOp::memsetOf(dst, value, count, width);
    c.capture.ops.push_back(std::move(r));
    return true;
  }
  if (c.mode == Mode::Replaying) {
    if (const DeviceOp *r = nextRecorded(DeviceOp::Memset, "memset"))
      if (r->dst != dst || r->bytes != count || r->value != value)
        reportError("graph replay (" + c.keyText() +
                    "): a memset differs from the captured one");
    return true;
  }
  return false;
}

void *tx::emulator::graphAllocation(uint64_t bytes) {
  return Graphs::allocation(bytes);
}

bool tx::emulator::graphKeepsAllocation(void *ptr) {
  return Graphs::keepsAllocation(ptr);
}

#define TX_EXPORT extern "C" __attribute__((visibility("default")))

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
  Statistics s = statistics();
  std::string n(name);
  if (n == "bytes_h2d")
    return s.bytesHostToDevice;
  if (n == "bytes_d2h")
    return s.bytesDeviceToHost;
  if (n == "bytes_d2d")
    return s.bytesDeviceToDevice;
  if (n == "launches")
    return s.launches;
  if (n == "graph_launches")
    return s.graphLaunches;
  if (n == "graphs_captured")
    return s.graphsCaptured;
  if (n == "eager_calls")
    return s.eagerCalls;
  if (n == "syncs")
    return s.syncs;
  if (n == "allocations")
    return s.allocations;
  if (n == "device_bytes_in_use")
    return s.deviceBytesInUse;
  return UINT64_MAX;
}

TX_EXPORT void txGpuWeightsReleased() {
  reportError("a function of the module was called after its device-resident "
              "weights were released (the module was unloaded)");
}
