//===- BufferCache.h - the runner's allocator of JIT'd buffers --*- C++ -*-===//
//
// Code lowered by tx-to-cpu allocates its buffers with malloc (or
// aligned_alloc, calloc) and frees them with free. glibc mmaps every block
// above its mmap threshold and unmaps it at free, so each call of a JIT'd
// function page-faults and zero-fills its large buffers again. The runner
// therefore registers its own malloc, aligned_alloc, calloc, realloc and
// free with the ExecutionEngine (runtimeSymbols): a block of at least
// kMinBytes allocated while a call runs comes from the call's runner's
// BufferCache, which keeps freed blocks (pages faulted in) and hands them
// out again in later calls; smaller blocks go to malloc.
//
// Every large block the caches hand out is recorded process-wide, so the
// registered free gives any pointer back to whoever made it: a block of a
// cache to its cache (from any thread, inside or outside a call), anything
// else to std::free. The blocks themselves come from std::aligned_alloc, so
// even a stray std::free of one would not corrupt the heap.
//
// Retention: a cache keeps at most as many bytes of freed blocks as its
// runner ever had allocated at once (the peak of its live large blocks,
// i.e. one call's peak); above that, the blocks freed longest ago go back to
// the system first. A freed block serves a request of up to 25% less than
// its size. Everything is freed with the cache (the runner).
//
//===----------------------------------------------------------------------===//

#ifndef TX_LIB_EXECUTION_BUFFERCACHE_H
#define TX_LIB_EXECUTION_BUFFERCACHE_H

#include "TxDialect/Execution/CpuRunner.h"

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <utility>
#include <vector>

namespace mlir::tx::detail {

class BufferCache {
public:
  /// Blocks below this size go to malloc: glibc serves them from its
  /// arenas without new page faults (its mmap threshold starts at 128 KiB).
  static constexpr size_t kMinBytes = size_t(128) << 10;
  /// Alignment of every cached block (enough for any vector type).
  static constexpr size_t kAlignment = 64;

  /// A disabled cache only counts: its large blocks come from the system and
  /// go back at every free (what the runner did before the cache).
  explicit BufferCache(bool enabled) : enabled(enabled) {}
  /// Frees the blocks it keeps and those still allocated (leaked by a call
  /// that ended with a failed runtime check).
  ~BufferCache();
  BufferCache(const BufferCache &) = delete;
  BufferCache &operator=(const BufferCache &) = delete;

  /// A block of at least `bytes` (>= kMinBytes), aligned to kAlignment.
  void *allocate(size_t bytes);
  /// A block of `bytes` of any size: from the cache when it is large
  /// (>= kMinBytes), else from malloc. Either goes back with release().
  void *allocateAny(size_t bytes) {
    return bytes >= kMinBytes ? allocate(bytes) : std::malloc(bytes);
  }
  BufferCacheStats stats() const;

  /// Makes `cache` the one the registered allocation functions use on this
  /// thread while the scope lives (null: plain malloc).
  class Scope {
  public:
    explicit Scope(BufferCache *cache);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    BufferCache *previous;
  };
  /// The cache of the call running on this thread, or null.
  static BufferCache *current();

  /// Frees `p` where it came from: into its cache, or std::free.
  static void release(void *p);

  /// The allocation functions to register with the ExecutionEngine, by name.
  static std::vector<std::pair<const char *, void *>> runtimeSymbols();

private:
  struct Kept {
    void *block;
    size_t capacity;
    uint64_t freedAt; // order of the frees, for eviction
  };
  /// Called with the registry lock held.
  void keep(void *block, size_t capacity);

  const bool enabled;
  std::vector<Kept> kept;
  uint64_t freeCount = 0;
  uint64_t liveBytes = 0;
  BufferCacheStats counts;
};

} // namespace mlir::tx::detail

#endif // TX_LIB_EXECUTION_BUFFERCACHE_H
