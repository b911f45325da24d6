//===- Backend.h - collectives backends of the tx runtime -------*- C++ -*-===//

#ifndef TX_RUNTIME_COLLECTIVES_BACKEND_H
#define TX_RUNTIME_COLLECTIVES_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace tx::rt {

enum class DType { f32, f64, f16, bf16 };

inline size_t sizeOf(DType t) {
  return t == DType::f32 ? 4 : t == DType::f64 ? 8 : 2;
}
inline const char *nameOf(DType t) {
  switch (t) {
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  }
  return "?";
}

/// A runtime error; the C entry points print it and abort the job.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Sum collectives over contiguous buffers, per tensor-parallel group of
/// `group` consecutive world ranks.
class Backend {
public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;
  virtual int worldRank() = 0;
  virtual int worldSize() = 0;
  /// Whether buffers live in host memory (the runtime may pack them).
  virtual bool hostMemory() const { return true; }
  virtual void allReduce(const void *in, void *out, size_t count, DType t,
                         int group) = 0;
  /// `in` holds `group * recvCount` elements; rank r keeps block r.
  virtual void reduceScatter(const void *in, void *out, size_t recvCount,
                             DType t, int group) = 0;
  /// `out` receives `group * sendCount` elements, rank r's block at r.
  virtual void allGather(const void *in, void *out, size_t sendCount,
                         DType t, int group) = 0;
  virtual void setStream(void *) {}
  virtual void finalize() {}

  int groupRank(int group) {
    checkGroup(group);
    return worldRank() % group;
  }
  void checkGroup(int group) {
    int world = worldSize();
    if (group < 1 || world % group != 0)
      throw Error("group size " + std::to_string(group) +
                  " does not divide the " + std::to_string(world) +
                  " ranks of the " + name() + " backend");
  }
};

std::unique_ptr<Backend> createSingleBackend();
std::unique_ptr<Backend> createMPIBackend();  // throws when built without MPI
std::unique_ptr<Backend> createNCCLBackend(); // throws when NCCL is missing

} // namespace tx::rt

#endif // TX_RUNTIME_COLLECTIVES_BACKEND_H
