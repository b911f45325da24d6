//===- Memory.cpp - the allocations the emulated device knows -------------===//
//
// Kernels may touch only memory the device knows: its own allocations
// (mgpuMemAlloc), host memory registered with it (mgpuMemHostRegister*, how
// tx's host code hands buffers to kernels), the block's shared memory and
// the kernel module's globals. The loader puts a check before every load,
// store and atomic of a kernel whose address is not the thread's own stack.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"
#include "TxEmulator.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <mutex>

using namespace tx::emulator;

namespace {
/// Who last wrote and read a byte of shared memory, and in which barrier
/// epoch.
struct ShadowByte {
  uint64_t writeEpoch = 0, readEpoch = 0;
  int32_t writer = -1;
  int32_t reader = -1; // a thread, kManyReaders, or kWarpReader - warp
};
constexpr int32_t kManyReaders = -2;
constexpr int32_t kWarpReader = -3;

struct Region {
  uintptr_t start;
  uint64_t bytes;
  RegionKind kind;
  std::string name;
  std::vector<ShadowByte> shadow; // shared memory only
};

std::mutex &regionsMutex() {
  static std::mutex m;
  return m;
}
/// Bumped when a region goes away, so that cached hits are forgotten.
std::atomic<uint64_t> regionsGeneration{0};

std::map<uintptr_t, Region> &regions() {
  static std::map<uintptr_t, Region> r;
  return r;
}

const char *kindName(RegionKind kind) {
  switch (kind) {
  case RegionKind::DeviceAlloc:
    return "device allocation";
  case RegionKind::HostRegistered:
    return "registered host buffer";
  case RegionKind::Shared:
    return "shared memory";
  case RegionKind::ModuleGlobal:
    return "module global";
  case RegionKind::FreedDevice:
    return "freed device allocation";
  }
  return "region";
}

/// A device allocation, live or freed (they never overlap one another).
bool isDeviceKind(RegionKind kind) {
  return kind == RegionKind::DeviceAlloc || kind == RegionKind::FreedDevice;
}

/// The device region nearest at or before `a` (regionsMutex held), or
/// the map's end.
std::map<uintptr_t, Region>::iterator nearestDeviceRegion(uintptr_t a) {
  auto &map = regions();
  for (auto it = map.upper_bound(a); it != map.begin();) {
    --it;
    if (isDeviceKind(it->second.kind))
      return it;
  }
  return map.end();
}

/// " at 0x..." for messages.
std::string at(uintptr_t address) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), " at 0x%" PRIxPTR, address);
  return buf;
}

std::string describeRegion(uintptr_t start, const Region &r) {
  std::string s = std::to_string(r.bytes) + "-byte " + kindName(r.kind);
  if (!r.name.empty())
    s += " '" + r.name + "'";
  return s + at(start);
}
} // namespace

void tx::emulator::addRegion(const void *start, uint64_t bytes,
                             RegionKind kind, std::string name) {
  if (!start || bytes == 0)
    return;
  std::lock_guard<std::mutex> lock(regionsMutex());
  auto [it, inserted] = regions().try_emplace(
      reinterpret_cast<uintptr_t>(start),
      Region{reinterpret_cast<uintptr_t>(start), bytes, kind, name, {}});
  // The same buffer registered again (a weight used by two calls): keep the
  // larger extent.
  if (!inserted && it->second.bytes < bytes)
    it->second = Region{it->first, bytes, kind, std::move(name), {}};
  if (kind == RegionKind::Shared)
    it->second.shadow.assign(it->second.bytes, ShadowByte());
  regionsGeneration.fetch_add(1, std::memory_order_release);
}

void tx::emulator::removeRegion(const void *start) {
  std::lock_guard<std::mutex> lock(regionsMutex());
  regions().erase(reinterpret_cast<uintptr_t>(start));
  regionsGeneration.fetch_add(1, std::memory_order_release);
}

void tx::emulator::retireRegion(const void *start) {
  std::lock_guard<std::mutex> lock(regionsMutex());
  auto it = regions().find(reinterpret_cast<uintptr_t>(start));
  if (it != regions().end())
    it->second.kind = RegionKind::FreedDevice;
  regionsGeneration.fetch_add(1, std::memory_order_release);
}

namespace {
/// The region holding [address, address + bytes), or null.
Region *findRegion(uintptr_t a, uint64_t bytes) {
  if (a + bytes < a)
    return nullptr;
  // A few recently hit regions: kernels stream through few buffers.
  constexpr int kCached = 4;
  static thread_local uintptr_t starts[kCached] = {}, ends[kCached] = {};
  static thread_local Region *cached[kCached] = {};
  static thread_local int next = 0;
  static thread_local uint64_t generation = 0;
  uint64_t now = regionsGeneration.load(std::memory_order_acquire);
  if (generation != now) {
    generation = now;
    for (int i = 0; i < kCached; ++i)
      starts[i] = ends[i] = 0;
  }
  for (int i = 0; i < kCached; ++i)
    if (a >= starts[i] && a + bytes <= ends[i])
      return cached[i];
  std::lock_guard<std::mutex> lock(regionsMutex());
  auto &map = regions();
  // Regions may overlap (a view of a registered buffer is registered with
  // its own start and extent): any region starting at or before `a` may
  // hold the access, not only the nearest.
  auto it = map.upper_bound(a);
  uintptr_t end = 0;
  while (it != map.begin()) {
    --it;
    end = it->first + it->second.bytes;
    if (a + bytes <= end)
      break;
    end = 0;
  }
  if (!end)
    return nullptr;
  starts[next] = it->first;
  ends[next] = end;
  cached[next] = &it->second;
  next = (next + 1) % kCached;
  return &it->second;
}

std::string threadName(int32_t id) {
  if (id == kManyReaders)
    return "several threads";
  if (id <= kWarpReader)
    return "warp " + std::to_string(kWarpReader - id);
  return "thread " + std::to_string(id);
}

/// Race tracking of one shared-memory access; the message of a race, or
/// empty.
std::string trackShared(Region &r, uint64_t offset, uint64_t bytes,
                        AccessKind kind) {
  uint64_t epoch = currentEpoch();
  int32_t me = currentThreadId();
  if (me < 0 || kind == AccessKind::Atomic)
    return {};
  int32_t myWarp = me / 32;
  auto sameWarp = [&](int32_t other) { return other >= 0 && other / 32 == myWarp; };
  for (uint64_t i = offset; i < offset + bytes && i < r.shadow.size(); ++i) {
    ShadowByte &cell = r.shadow[i];
    bool writtenNow = cell.writeEpoch == epoch && cell.writer != me;
    if (kind == AccessKind::WarpLoad) {
      if (writtenNow && !sameWarp(cell.writer))
        return "reads what thread " + std::to_string(cell.writer) +
               " wrote with no barrier between";
      if (cell.readEpoch != epoch || cell.reader == kWarpReader - myWarp)
        cell.reader = kWarpReader - myWarp;
      else
        cell.reader = kManyReaders;
      cell.readEpoch = epoch;
      continue;
    }
    if (kind == AccessKind::Load) {
      if (writtenNow)
        return "reads what thread " + std::to_string(cell.writer) +
               " wrote with no barrier between";
      if (cell.readEpoch != epoch || cell.reader == me)
        cell.reader = me;
      else
        cell.reader = kManyReaders;
      cell.readEpoch = epoch;
      continue;
    }
    // A store.
    if (writtenNow)
      return "overwrites what thread " + std::to_string(cell.writer) +
             " wrote with no barrier between";
    if (cell.readEpoch == epoch && cell.reader != me &&
        cell.reader != kWarpReader - myWarp)
      return "overwrites what " + threadName(cell.reader) +
             " read with no barrier between";
    cell.writer = me;
    cell.writeEpoch = epoch;
  }
  return {};
}
} // namespace

const char *tx::emulator::accessName(AccessKind kind) {
  switch (kind) {
  case AccessKind::Load:
    return "load";
  case AccessKind::Store:
    return "store";
  case AccessKind::Atomic:
    return "atomic";
  case AccessKind::WarpLoad:
    return "warp-collective load";
  }
  return "access";
}

static void reportOutOfBounds(const void *address, uint64_t bytes,
                              const char *function, const char *what) {
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::string nearest;
  {
    std::lock_guard<std::mutex> lock(regionsMutex());
    auto &map = regions();
    auto it = map.upper_bound(a);
    if (it != map.begin()) {
      auto prev = std::prev(it);
      uintptr_t end = prev->first + prev->second.bytes;
      if (a + bytes > end)
        nearest = std::to_string(a + bytes - end) +
                  " byte(s) past the end of the " +
                  describeRegion(prev->first, prev->second);
    }
    if (nearest.empty() && it != map.end())
      nearest = std::to_string(it->first - a) + " byte(s) before the " +
                describeRegion(it->first, it->second);
  }
  reportError(describeCurrentThread() + ": out-of-bounds " +
              std::to_string(bytes) + "-byte " + what + " in '" + function +
              "'" + at(a) +
              (nearest.empty()
                   ? std::string(" (no allocation of the device is near)")
                   : " (" + nearest + ")"));
}

void tx::emulator::checkAccess(const void *address, uint64_t bytes,
                               AccessKind kind, const char *function) {
  ++mutableStatistics().checkedAccesses;
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  Region *region = findRegion(a, bytes);
  if (!region)
    return reportOutOfBounds(address, bytes, function, accessName(kind));
  if (region->kind == RegionKind::FreedDevice)
    return reportError(describeCurrentThread() + ": use of freed memory: " +
                       std::to_string(bytes) + "-byte " + accessName(kind) +
                       " in '" + function + "'" + at(a) + " (offset " +
                       std::to_string(a - region->start) + " of the " +
                       describeRegion(region->start, *region) + ")");
  if (region->kind != RegionKind::Shared)
    return;
  uintptr_t start = region->start;
  std::string race = trackShared(*region, a - start, bytes, kind);
  if (race.empty())
    return;
  reportError(describeCurrentThread() + ": shared-memory race: " +
              std::to_string(bytes) + "-byte " + accessName(kind) + " in '" +
              function + "'" + at(a) + " (offset " + std::to_string(a - start) +
              " of '" + region->name + "') " + race +
              " (a missing bar.sync?)");
}


bool tx::emulator::isDeviceMemory(const void *address) {
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(regionsMutex());
  auto it = nearestDeviceRegion(a);
  return it != regions().end() && a < it->first + it->second.bytes;
}

bool tx::emulator::checkTransfer(const void *address, uint64_t bytes,
                                 const char *what) {
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::string error;
  {
    std::lock_guard<std::mutex> lock(regionsMutex());
    auto &map = regions();
    // Device allocations (live or freed) do not overlap one another: the
    // nearest one starting at or before `a`, and those starting inside the
    // range, are all that can be touched.
    auto prev = nearestDeviceRegion(a);
    if (prev != map.end()) {
      const Region &r = prev->second;
      uint64_t end = prev->first + r.bytes;
      if (a < end) {
        if (r.kind == RegionKind::FreedDevice)
          error = "is freed memory (offset " + std::to_string(a - prev->first) +
                  " of the " + describeRegion(prev->first, r) + ")";
        else if (a + bytes > end)
          error = "runs " + std::to_string(a + bytes - end) +
                  " byte(s) past the end of the " +
                  describeRegion(prev->first, r);
      }
    }
    auto it = map.upper_bound(a);
    for (; error.empty() && it != map.end() && it->first < a + bytes; ++it)
      if (isDeviceKind(it->second.kind))
        error = "overlaps the " + describeRegion(it->first, it->second) +
                " without starting in it";
  }
  if (error.empty())
    return true;
  reportError(std::string(what) + ": " + std::to_string(bytes) +
              "-byte range" + at(a) + " " + error);
  return false;
}

bool tx::emulator::isRegisteredHostMemory(const void *address) {
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(regionsMutex());
  auto &map = regions();
  // Registered buffers may overlap (a view registered with its own
  // extent): any one starting at or before `a` may hold it.
  for (auto it = map.upper_bound(a); it != map.begin();) {
    --it;
    if (it->second.kind == RegionKind::HostRegistered &&
        a < it->first + it->second.bytes)
      return true;
  }
  return false;
}
