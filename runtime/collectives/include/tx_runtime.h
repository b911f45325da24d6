/*===- tx_runtime.h - the tx collectives runtime (C ABI) ---------*- C -*-===//
 *
 * What code lowered by tx-lower-collectives-to-runtime calls. Collectives
 * take unranked memref descriptors (mlir/ExecutionEngine/CRunnerUtils.h's
 * UnrankedMemRefType<T>, passed by pointer: the `_mlir_ciface_` C interface)
 * and sum over the tensor-parallel group of `group` consecutive ranks.
 * `out` must be contiguous; `in` may be strided. 16-bit types travel as
 * uint16_t and are summed in float.
 *
 * Backend (TX_RT_BACKEND): `single` (a group of one, no MPI), `mpi`, `nccl`
 * (device pointers; libnccl.so.2 opened with dlopen; MPI bootstraps the
 * communicator when there are several processes). Default: `mpi` when the
 * process was started by mpirun, else `single`. Errors print
 * "tx_rt: error: ..." and abort the job.
 *
 *===---------------------------------------------------------------------===*/

#ifndef TX_RUNTIME_H
#define TX_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct TxRtUnrankedMemRef { /* layout of UnrankedMemRefType<T> */
  int64_t rank;
  void *descriptor;
};

#define TX_RT_DECLARE(T)                                                      \
  void _mlir_ciface_tx_rt_all_reduce_##T(struct TxRtUnrankedMemRef *in,      \
                                         struct TxRtUnrankedMemRef *out,     \
                                         int64_t group);                     \
  void _mlir_ciface_tx_rt_reduce_scatter_##T(struct TxRtUnrankedMemRef *in,  \
                                             struct TxRtUnrankedMemRef *out, \
                                             int64_t dim, int64_t group);    \
  void _mlir_ciface_tx_rt_all_gather_##T(struct TxRtUnrankedMemRef *in,      \
                                         struct TxRtUnrankedMemRef *out,     \
                                         int64_t dim, int64_t group);
TX_RT_DECLARE(f32)
TX_RT_DECLARE(f64)
TX_RT_DECLARE(f16)
TX_RT_DECLARE(bf16)
#undef TX_RT_DECLARE

/* The same on a CUDA stream: what the host code of tx-to-nvvm calls, with
 * device buffers and the stream its call's copies and kernels are on (the
 * collective is enqueued between them). Needs the nccl backend. */
#define TX_RT_DECLARE_ON_STREAM(T)                                            \
  void _mlir_ciface_tx_rt_all_reduce_##T##_on_stream(                         \
      struct TxRtUnrankedMemRef *in, struct TxRtUnrankedMemRef *out,          \
      int64_t group, void *stream);                                           \
  void _mlir_ciface_tx_rt_reduce_scatter_##T##_on_stream(                     \
      struct TxRtUnrankedMemRef *in, struct TxRtUnrankedMemRef *out,          \
      int64_t dim, int64_t group, void *stream);                              \
  void _mlir_ciface_tx_rt_all_gather_##T##_on_stream(                         \
      struct TxRtUnrankedMemRef *in, struct TxRtUnrankedMemRef *out,          \
      int64_t dim, int64_t group, void *stream);
TX_RT_DECLARE_ON_STREAM(f32)
TX_RT_DECLARE_ON_STREAM(f64)
TX_RT_DECLARE_ON_STREAM(f16)
TX_RT_DECLARE_ON_STREAM(bf16)
#undef TX_RT_DECLARE_ON_STREAM

/* This process's rank in its tensor-parallel group of `group` ranks. */
int64_t tx_rt_rank(int64_t group);
/* Number of processes (1 for the single backend). */
int64_t tx_rt_world_size(void);
/* Rank in the whole job. */
int64_t tx_rt_world_rank(void);
/* Name of the active backend ("single", "mpi", "nccl"). */
const char *tx_rt_backend_name(void);
/* CUDA stream the NCCL backend enqueues on (default: the legacy stream). */
void tx_rt_set_cuda_stream(void *stream);
/* Tears the backend down (also done at exit). */
void tx_rt_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* TX_RUNTIME_H */
