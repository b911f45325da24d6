//===- SingleBackend.cpp - a group of one process -------------------------===//
//
// Every collective over one rank is a copy: lets the lowered code run in
// tests without MPI.

#include "Backend.h"

#include <cstring>

namespace {
class SingleBackend final : public tx::rt::Backend {
public:
  const char *name() const override { return "single"; }
  int worldRank() override { return 0; }
  int worldSize() override { return 1; }
  void allReduce(const void *in, void *out, size_t count, tx::rt::DType t,
                 int) override {
    std::memmove(out, in, count * tx::rt::sizeOf(t));
  }
  void reduceScatter(const void *in, void *out, size_t count,
                     tx::rt::DType t, int) override {
    std::memmove(out, in, count * tx::rt::sizeOf(t));
  }
  void allGather(const void *in, void *out, size_t count, tx::rt::DType t,
                 int) override {
    std::memmove(out, in, count * tx::rt::sizeOf(t));
  }
};
} // namespace

std::unique_ptr<tx::rt::Backend> tx::rt::createSingleBackend() {
  return std::make_unique<SingleBackend>();
}
