//===- BufferCache.cpp - the runner's allocator of JIT'd buffers ---------===//

#include "BufferCache.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir::tx;
using namespace mlir::tx::detail;

namespace {
/// Every large block a cache handed out and that was not freed since: its
/// cache and size. One lock for the registry and all caches (a call makes a
/// few hundred large allocations at most).
struct Registry {
  std::mutex lock;
  llvm::DenseMap<void *, std::pair<BufferCache *, size_t>> live;
};
Registry &registry() {
  static Registry *r = new Registry(); // never destroyed: JIT'd code of a
  return *r;                           // leaked engine may still free
}
thread_local BufferCache *currentCache = nullptr;

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }
} // namespace

BufferCache::Scope::Scope(BufferCache *cache) : previous(currentCache) {
  currentCache = cache;
}
BufferCache::Scope::~Scope() { currentCache = previous; }
BufferCache *BufferCache::current() { return currentCache; }

void *BufferCache::allocate(size_t bytes) {
  size_t capacity = roundUp(std::max<size_t>(bytes, 1), 4096);
  Registry &r = registry();
  std::unique_lock<std::mutex> guard(r.lock);
  void *block = nullptr;
  // The smallest kept block that fits and wastes at most a quarter of itself.
  auto best = kept.end();
  for (auto it = kept.begin(); it != kept.end(); ++it)
    if (it->capacity >= capacity && it->capacity - capacity <= it->capacity / 4 &&
        (best == kept.end() || it->capacity < best->capacity))
      best = it;
  if (best != kept.end()) {
    block = best->block;
    capacity = best->capacity;
    counts.keptBytes -= capacity;
    kept.erase(best);
    ++counts.fromCache;
  } else {
    guard.unlock();
    block = std::aligned_alloc(kAlignment, capacity);
    if (!block)
      return nullptr;
    guard.lock();
    ++counts.fromSystem;
  }
  r.live[block] = {this, capacity};
  liveBytes += capacity;
  counts.peakLiveBytes = std::max(counts.peakLiveBytes, liveBytes);
  return block;
}

void BufferCache::keep(void *block, size_t capacity) {
  liveBytes -= capacity;
  if (!enabled) {
    ++counts.returnedBlocks;
    std::free(block);
    return;
  }
  kept.push_back({block, capacity, ++freeCount});
  counts.keptBytes += capacity;
  // At most one call's peak is kept: the blocks freed longest ago go first.
  while (counts.keptBytes > counts.peakLiveBytes) {
    auto oldest = std::min_element(
        kept.begin(), kept.end(),
        [](const Kept &a, const Kept &b) { return a.freedAt < b.freedAt; });
    counts.keptBytes -= oldest->capacity;
    ++counts.returnedBlocks;
    std::free(oldest->block);
    kept.erase(oldest);
  }
}

void BufferCache::release(void *p) {
  if (!p)
    return;
  Registry &r = registry();
  {
    std::lock_guard<std::mutex> guard(r.lock);
    auto it = r.live.find(p);
    if (it != r.live.end()) {
      auto [cache, capacity] = it->second;
      r.live.erase(it);
      cache->keep(p, capacity);
      return;
    }
  }
  std::free(p);
}

BufferCacheStats BufferCache::stats() const {
  std::lock_guard<std::mutex> guard(registry().lock);
  return counts;
}

BufferCache::~BufferCache() {
  Registry &r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  for (const Kept &k : kept)
    std::free(k.block);
  llvm::SmallVector<void *> mine;
  for (auto &[block, owner] : r.live)
    if (owner.first == this)
      mine.push_back(block);
  for (void *block : mine) {
    r.live.erase(block);
    std::free(block);
  }
}

//===----------------------------------------------------------------------===//
// The functions JIT'd code calls
//===----------------------------------------------------------------------===//

/// The cache a request of `bytes` goes to, or null for the C library.
static BufferCache *cacheFor(size_t bytes) {
  return bytes >= BufferCache::kMinBytes ? currentCache : nullptr;
}

static void *txMalloc(size_t bytes) {
  if (BufferCache *cache = currentCache)
    return cache->allocateAny(bytes);
  return std::malloc(bytes);
}

static void *txAlignedAlloc(size_t alignment, size_t bytes) {
  if (alignment <= BufferCache::kAlignment)
    if (BufferCache *cache = cacheFor(bytes))
      return cache->allocate(bytes);
  return std::aligned_alloc(alignment, bytes);
}

static void *txCalloc(size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes))
    return nullptr;
  if (BufferCache *cache = cacheFor(bytes)) {
    void *p = cache->allocate(bytes);
    if (p)
      std::memset(p, 0, bytes);
    return p;
  }
  return std::calloc(count, size);
}

static void txFree(void *p) { BufferCache::release(p); }

/// realloc: a null block is a malloc; a C library block stays one
/// (std::realloc); a cached block keeps its capacity when the request fits,
/// else moves to a new block.
static void *txRealloc(void *p, size_t bytes) {
  if (!p)
    return txMalloc(bytes);
  size_t old = 0;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> guard(r.lock);
    auto it = r.live.find(p);
    if (it != r.live.end())
      old = it->second.second;
  }
  if (!old)
    return std::realloc(p, bytes);
  if (bytes <= old)
    return p;
  void *q = txMalloc(bytes);
  if (!q)
    return nullptr;
  std::memcpy(q, p, old);
  BufferCache::release(p);
  return q;
}

std::vector<std::pair<const char *, void *>> BufferCache::runtimeSymbols() {
  return {
      {"malloc", reinterpret_cast<void *>(&txMalloc)},
      {"aligned_alloc", reinterpret_cast<void *>(&txAlignedAlloc)},
      {"calloc", reinterpret_cast<void *>(&txCalloc)},
      {"realloc", reinterpret_cast<void *>(&txRealloc)},
      {"free", reinterpret_cast<void *>(&txFree)},
  };
}
