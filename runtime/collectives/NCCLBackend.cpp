//===- NCCLBackend.cpp - collectives over NCCL (GPU ranks) ----------------===//
//
// libnccl.so.2 is opened with dlopen, so neither building nor the CPU tests
// need NCCL. Buffers are device pointers and must be contiguous; the
// caller has selected the CUDA device. Several processes bootstrap the
// communicator's unique id over MPI; one process forms a group of one.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <vector>

using namespace tx::rt;

namespace tx::rt {
bool mpiWorld(int &rank, int &size);
void mpiBroadcast(void *data, size_t bytes);
} // namespace tx::rt

namespace {

// The slice of nccl.h the runtime uses (values from NCCL 2.x's nccl.h).
using ncclResult_t = int;
using ncclComm_t = void *;
struct ncclUniqueId {
  char internal[128];
};
enum ncclDataType_t { ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8,
                      ncclBfloat16 = 9 };
enum ncclRedOp_t { ncclSum = 0 };

struct NCCL {
  void *handle = nullptr;
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*commDestroy)(ncclComm_t);
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t,
                            ncclRedOp_t, ncclComm_t, void *);
  ncclResult_t (*reduceScatter)(const void *, void *, size_t, ncclDataType_t,
                                ncclRedOp_t, ncclComm_t, void *);
  ncclResult_t (*allGather)(const void *, void *, size_t, ncclDataType_t,
                            ncclComm_t, void *);
  const char *(*getErrorString)(ncclResult_t);

  template <typename F> void bind(F &fn, const char *sym) {
    fn = reinterpret_cast<F>(dlsym(handle, sym));
    if (!fn)
      throw Error(std::string("nccl backend: libnccl.so.2 has no ") + sym);
  }

  NCCL() {
    const char *lib = std::getenv("TX_RT_NCCL_LIBRARY");
    handle = dlopen(lib ? lib : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      throw Error(std::string("nccl backend: cannot open ") +
                  (lib ? lib : "libnccl.so.2") + ": " + dlerror());
    bind(getUniqueId, "ncclGetUniqueId");
    bind(commInitRank, "ncclCommInitRank");
    bind(commDestroy, "ncclCommDestroy");
    bind(allReduce, "ncclAllReduce");
    bind(reduceScatter, "ncclReduceScatter");
    bind(allGather, "ncclAllGather");
    bind(getErrorString, "ncclGetErrorString");
  }

  void check(ncclResult_t rc, const char *what) {
    if (rc != 0)
      throw Error(std::string("nccl backend: ") + what + " failed: " +
                  getErrorString(rc));
  }
};

ncclDataType_t ncclType(DType t) {
  switch (t) {
  case DType::f32: return ncclFloat32;
  case DType::f64: return ncclFloat64;
  case DType::f16: return ncclFloat16;
  case DType::bf16: return ncclBfloat16;
  }
  throw Error("nccl backend: unknown element type");
}

class NCCLBackend final : public Backend {
public:
  NCCLBackend() {
    bool underMPI = std::getenv("OMPI_COMM_WORLD_SIZE") ||
                    std::getenv("PMI_SIZE");
    if (underMPI && !mpiWorld(rank, size))
      throw Error("nccl backend: started by mpirun, but the runtime was "
                  "built without MPI to bootstrap NCCL");
  }
  const char *name() const override { return "nccl"; }
  bool hostMemory() const override { return false; }
  int worldRank() override { return rank; }
  int worldSize() override { return size; }
  void setStream(void *s) override { stream = s; }

  void allReduce(const void *in, void *out, size_t count, DType t,
                 int group) override {
    nccl.check(nccl.allReduce(in, out, count, ncclType(t), ncclSum,
                              comm(group), stream),
               "ncclAllReduce");
  }
  void reduceScatter(const void *in, void *out, size_t recvCount, DType t,
                     int group) override {
    nccl.check(nccl.reduceScatter(in, out, recvCount, ncclType(t), ncclSum,
                                  comm(group), stream),
               "ncclReduceScatter");
  }
  void allGather(const void *in, void *out, size_t sendCount, DType t,
                 int group) override {
    nccl.check(nccl.allGather(in, out, sendCount, ncclType(t), comm(group),
                              stream),
               "ncclAllGather");
  }
  void finalize() override {
    for (auto &[g, c] : comms)
      nccl.commDestroy(c);
    comms.clear();
  }

private:
  /// One communicator per group size; group k's rank 0 makes the id. Every
  /// rank takes part in every broadcast, so all ranks must create the same
  /// groups in the same order (they run the same program).
  ncclComm_t comm(int group) {
    checkGroup(group);
    auto it = comms.find(group);
    if (it != comms.end())
      return it->second;
    std::vector<ncclUniqueId> ids(size / group);
    if (rank == 0)
      for (ncclUniqueId &id : ids)
        nccl.check(nccl.getUniqueId(&id), "ncclGetUniqueId");
    if (size > 1)
      mpiBroadcast(ids.data(), ids.size() * sizeof(ncclUniqueId));
    ncclComm_t c;
    nccl.check(nccl.commInitRank(&c, group, ids[rank / group], rank % group),
               "ncclCommInitRank");
    comms[group] = c;
    return c;
  }

  NCCL nccl;
  int rank = 0, size = 1;
  void *stream = nullptr;
  std::map<int, ncclComm_t> comms;
};

} // namespace

std::unique_ptr<Backend> tx::rt::createNCCLBackend() {
  return std::make_unique<NCCLBackend>();
}
