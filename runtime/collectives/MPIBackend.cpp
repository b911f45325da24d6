//===- MPIBackend.cpp - collectives over MPI (CPU ranks) ------------------===//
//
// One communicator per tensor-parallel group size: world ranks
// [k * group, (k + 1) * group) form group k (MPI_Comm_split). f16 and bf16
// travel as MPI_UINT16_T and are summed in float by user-defined ops.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#ifdef TX_RT_HAVE_MPI
#include "Half.h"

#include <map>
#include <mpi.h>

using namespace tx::rt;

namespace {

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(std::string("mpi backend: ") + what + " failed: " +
              std::string(msg, len));
}

/// Initialises MPI unless somebody already did; true when this call did
/// (and the caller then owns finalising it).
bool initMPI() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return false;
  int provided;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
        "MPI_Init_thread");
  return true;
}

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void sum16(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = FromF(ToF(a[i]) + ToF(b[i]));
}

class MPIBackend final : public Backend {
public:
  MPIBackend() {
    ownsMPI = initMPI();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    check(MPI_Op_create(&sum16<f16ToFloat, floatToF16>, 1, &sumF16),
          "MPI_Op_create");
    check(MPI_Op_create(&sum16<bf16ToFloat, floatToBf16>, 1, &sumBF16),
          "MPI_Op_create");
  }

  const char *name() const override { return "mpi"; }
  int worldRank() override { return rank; }
  int worldSize() override { return size; }

  void allReduce(const void *in, void *out, size_t count, DType t,
                 int group) override {
    check(MPI_Allreduce(in, out, intCount(count), type(t), op(t), comm(group)),
          "MPI_Allreduce");
  }
  void reduceScatter(const void *in, void *out, size_t recvCount, DType t,
                     int group) override {
    check(MPI_Reduce_scatter_block(in, out, intCount(recvCount), type(t),
                                   op(t), comm(group)),
          "MPI_Reduce_scatter_block");
  }
  void allGather(const void *in, void *out, size_t sendCount, DType t,
                 int group) override {
    check(MPI_Allgather(in, intCount(sendCount), type(t), out,
                        intCount(sendCount), type(t), comm(group)),
          "MPI_Allgather");
  }

  void finalize() override {
    if (finalized)
      return;
    finalized = true;
    for (auto &[g, c] : comms)
      if (c != MPI_COMM_WORLD)
        MPI_Comm_free(&c);
    MPI_Op_free(&sumF16);
    MPI_Op_free(&sumBF16);
    int done = 0;
    MPI_Finalized(&done);
    if (ownsMPI && !done)
      MPI_Finalize();
  }

private:
  static int intCount(size_t n) {
    if (n > size_t(INT32_MAX))
      throw Error("mpi backend: " + std::to_string(n) +
                  " elements exceed MPI's int count");
    return int(n);
  }
  static MPI_Datatype type(DType t) {
    switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::f64: return MPI_DOUBLE;
    case DType::f16:
    case DType::bf16: return MPI_UINT16_T;
    }
    throw Error("mpi backend: unknown element type");
  }
  MPI_Op op(DType t) const {
    return t == DType::f16 ? sumF16 : t == DType::bf16 ? sumBF16 : MPI_SUM;
  }
  MPI_Comm comm(int group) {
    checkGroup(group);
    if (group == size)
      return MPI_COMM_WORLD;
    auto it = comms.find(group);
    if (it != comms.end())
      return it->second;
    MPI_Comm c;
    check(MPI_Comm_split(MPI_COMM_WORLD, rank / group, rank, &c),
          "MPI_Comm_split");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    comms[group] = c;
    return c;
  }

  int rank = 0, size = 1;
  bool ownsMPI = false, finalized = false;
  MPI_Op sumF16, sumBF16;
  std::map<int, MPI_Comm> comms;
};

} // namespace

std::unique_ptr<Backend> tx::rt::createMPIBackend() {
  return std::make_unique<MPIBackend>();
}

/// The NCCL backend bootstraps its communicator over MPI.
namespace tx::rt {
bool mpiWorld(int &rank, int &size) {
  initMPI();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return true;
}
void mpiBroadcast(void *data, size_t bytes) {
  check(MPI_Bcast(data, int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
}
} // namespace tx::rt

#else

std::unique_ptr<tx::rt::Backend> tx::rt::createMPIBackend() {
  throw tx::rt::Error("the runtime was built without MPI (install "
                      "libopenmpi-dev and reconfigure)");
}
namespace tx::rt {
bool mpiWorld(int &rank, int &size) {
  rank = 0;
  size = 1;
  return false;
}
void mpiBroadcast(void *, size_t) {}
} // namespace tx::rt

#endif
