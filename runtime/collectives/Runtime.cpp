//===- Runtime.cpp - C entry points of the tx collectives runtime ---------===//
//
// Reads memref descriptors, packs strided or non-leading-dimension operands
// into the contiguous block order the backends expect, and turns every
// error into one "tx_rt: error:" line and an abort (generated code has no
// way to handle an error code).
//
//===----------------------------------------------------------------------===//

#include "tx_runtime.h"

#include "Backend.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

using namespace tx::rt;

namespace {

std::unique_ptr<Backend> &backendSlot() {
  static std::unique_ptr<Backend> backend;
  return backend;
}

Backend &backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *choice = std::getenv("TX_RT_BACKEND");
    std::string name = choice ? choice : "";
    if (name.empty())
      name = (std::getenv("OMPI_COMM_WORLD_SIZE") ||
              std::getenv("PMI_SIZE"))
                 ? "mpi"
                 : "single";
    if (name == "single")
      backendSlot() = createSingleBackend();
    else if (name == "mpi")
      backendSlot() = createMPIBackend();
    else if (name == "nccl")
      backendSlot() = createNCCLBackend();
    else
      throw Error("unknown TX_RT_BACKEND '" + name +
                  "' (expected single, mpi or nccl)");
    std::atexit([] {
      if (backendSlot())
        backendSlot()->finalize();
    });
  });
  return *backendSlot();
}

template <typename Fn>
auto guarded(const char *what, Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tx_rt: error: %s: %s\n", what, e.what());
    std::fflush(stderr);
    std::abort();
  }
}

/// A memref seen through its descriptor.
struct Buffer {
  char *data;
  std::vector<int64_t> sizes, strides;
  size_t elemSize;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
  bool contiguous() const {
    int64_t expect = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      if (sizes[i] != 1 && strides[i] != expect)
        return false;
      expect *= sizes[i];
    }
    return true;
  }
};

template <typename T>
Buffer view(TxRtUnrankedMemRef *m, const char *which) {
  if (!m || !m->descriptor)
    throw Error(std::string("null memref descriptor for ") + which);
  ::UnrankedMemRefType<T> u{m->rank, m->descriptor};
  DynamicMemRefType<T> d(u);
  Buffer b;
  b.data = reinterpret_cast<char *>(d.data + d.offset);
  b.sizes.assign(d.sizes, d.sizes + d.rank);
  b.strides.assign(d.strides, d.strides + d.rank);
  b.elemSize = sizeof(T);
  return b;
}

/// Copies `b` in row-major order into `dst` (contiguous).
void packRowMajor(const Buffer &b, char *dst) {
  int64_t n = b.numElements();
  if (n == 0)
    return;
  if (b.contiguous()) {
    std::memcpy(dst, b.data, n * b.elemSize);
    return;
  }
  std::vector<int64_t> idx(b.sizes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      off += idx[i] * b.strides[i];
    std::memcpy(dst + k * b.elemSize, b.data + off * b.elemSize, b.elemSize);
    for (size_t i = idx.size(); i-- > 0;) {
      if (++idx[i] < b.sizes[i])
        break;
      idx[i] = 0;
    }
  }
}

void checkSameShape(const Buffer &in, const Buffer &out, int64_t dim,
                    int64_t inScale, int64_t outScale, const char *op) {
  if (in.sizes.size() != out.sizes.size())
    throw Error(std::string(op) + ": input rank " +
                std::to_string(in.sizes.size()) + " differs from output rank " +
                std::to_string(out.sizes.size()));
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    bool ok = int64_t(i) == dim ? in.sizes[i] * inScale == out.sizes[i] * outScale
                                : in.sizes[i] == out.sizes[i];
    if (!ok)
      throw Error(std::string(op) + ": output dimension " + std::to_string(i) +
                  " has size " + std::to_string(out.sizes[i]) +
                  ", which does not match the input's " +
                  std::to_string(in.sizes[i]));
  }
  if (!out.contiguous())
    throw Error(std::string(op) + ": the output buffer must be contiguous");
}

/// Sizes before, at and after `dim`.
void split3(const std::vector<int64_t> &sizes, int64_t dim, int64_t &outer,
            int64_t &len, int64_t &inner) {
  outer = inner = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= sizes[i];
  len = sizes[dim];
  for (size_t i = dim + 1; i < sizes.size(); ++i)
    inner *= sizes[i];
}

void checkDim(const Buffer &b, int64_t dim, const char *op) {
  if (dim < 0 || dim >= int64_t(b.sizes.size()))
    throw Error(std::string(op) + ": dim " + std::to_string(dim) +
                " is out of range for rank " + std::to_string(b.sizes.size()));
}

void allReduce(const Buffer &in, const Buffer &out, DType t, int64_t group) {
  Backend &be = backend();
  be.checkGroup(int(group));
  checkSameShape(in, out, -1, 1, 1, "all_reduce");
  size_t n = in.numElements();
  if (!be.hostMemory() || in.contiguous()) {
    if (!in.contiguous())
      throw Error(std::string(be.name()) +
                  " backend: all_reduce input must be contiguous");
    be.allReduce(in.data, out.data, n, t, int(group));
    return;
  }
  std::vector<char> tmp(n * in.elemSize);
  packRowMajor(in, tmp.data());
  be.allReduce(tmp.data(), out.data, n, t, int(group));
}

void reduceScatter(const Buffer &in, const Buffer &out, int64_t dim,
                   DType t, int64_t group) {
  Backend &be = backend();
  be.checkGroup(int(group));
  checkDim(in, dim, "reduce_scatter");
  if (in.sizes[dim] % group != 0)
    throw Error("reduce_scatter: dimension " + std::to_string(dim) +
                " of size " + std::to_string(in.sizes[dim]) +
                " is not divisible by the group size " +
                std::to_string(group));
  checkSameShape(in, out, dim, 1, group, "reduce_scatter");
  int64_t outer, len, inner;
  split3(in.sizes, dim, outer, len, inner);
  int64_t local = len / group;
  size_t recv = size_t(outer * local * inner), es = in.elemSize;
  if (outer == 1 && in.contiguous()) {
    be.reduceScatter(in.data, out.data, recv, t, int(group));
    return;
  }
  if (!be.hostMemory())
    throw Error(std::string(be.name()) +
                " backend: reduce_scatter needs a contiguous input scattered "
                "along its leading dimension");
  // Block k of the send buffer is [outer][local][inner] at k * local.
  std::vector<char> rowMajor(in.numElements() * es), send(rowMajor.size());
  packRowMajor(in, rowMajor.data());
  size_t chunk = size_t(local * inner) * es;
  for (int64_t k = 0; k < group; ++k)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(send.data() + (k * outer + o) * chunk,
                  rowMajor.data() + (o * len + k * local) * inner * es, chunk);
  be.reduceScatter(send.data(), out.data, recv, t, int(group));
}

void allGather(const Buffer &in, const Buffer &out, int64_t dim, DType t,
               int64_t group) {
  Backend &be = backend();
  be.checkGroup(int(group));
  checkDim(in, dim, "all_gather");
  checkSameShape(in, out, dim, group, 1, "all_gather");
  int64_t outer, local, inner;
  split3(in.sizes, dim, outer, local, inner);
  size_t send = size_t(outer * local * inner), es = in.elemSize;
  if (outer == 1 && in.contiguous()) {
    be.allGather(in.data, out.data, send, t, int(group));
    return;
  }
  if (!be.hostMemory())
    throw Error(std::string(be.name()) +
                " backend: all_gather needs a contiguous input gathered "
                "along its leading dimension");
  std::vector<char> packed(send * es), recv(send * es * group);
  packRowMajor(in, packed.data());
  be.allGather(packed.data(), recv.data(), send, t, int(group));
  size_t chunk = size_t(local * inner) * es;
  for (int64_t k = 0; k < group; ++k)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.data + (o * local * group + k * local) * inner * es,
                  recv.data() + (k * outer + o) * chunk, chunk);
}

} // namespace

#define TX_RT_DEFINE(SUFFIX, CTYPE, DTYPE)                                    \
  extern "C" void _mlir_ciface_tx_rt_all_reduce_##SUFFIX(                     \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t group) {       \
    guarded("all_reduce_" #SUFFIX, [&] {                                      \
      allReduce(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"), DTYPE,  \
                group);                                                       \
    });                                                                       \
  }                                                                           \
  extern "C" void _mlir_ciface_tx_rt_reduce_scatter_##SUFFIX(                 \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t dim,           \
      int64_t group) {                                                        \
    guarded("reduce_scatter_" #SUFFIX, [&] {                                  \
      reduceScatter(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"),     \
                    dim, DTYPE, group);                                       \
    });                                                                       \
  }                                                                           \
  extern "C" void _mlir_ciface_tx_rt_all_gather_##SUFFIX(                     \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t dim,           \
      int64_t group) {                                                        \
    guarded("all_gather_" #SUFFIX, [&] {                                      \
      allGather(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"), dim,    \
                DTYPE, group);                                                \
    });                                                                       \
  }

/// A collective of GPU code (tx-to-nvvm's host code passes the call's
/// stream): enqueued on `stream`, after the call's kernels and before its
/// next ones. Only a backend on device memory can take it.
template <typename F> void onStream(void *stream, const char *op, F &&f) {
  Backend &be = backend();
  if (be.hostMemory())
    throw Error(std::string(op) + ": a collective of GPU code (device "
                                  "buffers, on the call's CUDA stream) needs "
                                  "the nccl backend, not " +
                be.name() + " (TX_RT_BACKEND=nccl)");
  be.setStream(stream);
  f();
}

#define TX_RT_DEFINE_ON_STREAM(SUFFIX, CTYPE, DTYPE)                          \
  extern "C" void _mlir_ciface_tx_rt_all_reduce_##SUFFIX##_on_stream(         \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t group,         \
      void *stream) {                                                         \
    guarded("all_reduce_" #SUFFIX, [&] {                                      \
      onStream(stream, "all_reduce", [&] {                                    \
        allReduce(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"),       \
                  DTYPE, group);                                              \
      });                                                                     \
    });                                                                       \
  }                                                                           \
  extern "C" void _mlir_ciface_tx_rt_reduce_scatter_##SUFFIX##_on_stream(     \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t dim,           \
      int64_t group, void *stream) {                                          \
    guarded("reduce_scatter_" #SUFFIX, [&] {                                  \
      onStream(stream, "reduce_scatter", [&] {                                \
        reduceScatter(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"),   \
                      dim, DTYPE, group);                                     \
      });                                                                     \
    });                                                                       \
  }                                                                           \
  extern "C" void _mlir_ciface_tx_rt_all_gather_##SUFFIX##_on_stream(         \
      TxRtUnrankedMemRef *in, TxRtUnrankedMemRef *out, int64_t dim,           \
      int64_t group, void *stream) {                                          \
    guarded("all_gather_" #SUFFIX, [&] {                                      \
      onStream(stream, "all_gather", [&] {                                    \
        allGather(view<CTYPE>(in, "input"), view<CTYPE>(out, "output"), dim,  \
                  DTYPE, group);                                              \
      });                                                                     \
    });                                                                       \
  }

TX_RT_DEFINE(f32, float, DType::f32)
TX_RT_DEFINE(f64, double, DType::f64)
TX_RT_DEFINE(f16, uint16_t, DType::f16)
TX_RT_DEFINE(bf16, uint16_t, DType::bf16)
TX_RT_DEFINE_ON_STREAM(f32, float, DType::f32)
TX_RT_DEFINE_ON_STREAM(f64, double, DType::f64)
TX_RT_DEFINE_ON_STREAM(f16, uint16_t, DType::f16)
TX_RT_DEFINE_ON_STREAM(bf16, uint16_t, DType::bf16)

extern "C" int64_t tx_rt_rank(int64_t group) {
  return guarded("rank", [&] { return int64_t(backend().groupRank(int(group))); });
}
extern "C" int64_t tx_rt_world_size(void) {
  return guarded("world_size", [] { return int64_t(backend().worldSize()); });
}
extern "C" int64_t tx_rt_world_rank(void) {
  return guarded("world_rank", [] { return int64_t(backend().worldRank()); });
}
extern "C" const char *tx_rt_backend_name(void) {
  return guarded("backend", [] { return backend().name(); });
}
extern "C" void tx_rt_set_cuda_stream(void *stream) {
  guarded("set_cuda_stream", [&] { backend().setStream(stream); });
}
extern "C" void tx_rt_finalize(void) {
  guarded("finalize", [] {
    if (backendSlot())
      backendSlot()->finalize();
  });
}
