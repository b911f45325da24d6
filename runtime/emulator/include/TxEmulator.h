//===- TxEmulator.h - the emulated CUDA device, C++ API ---------*- C++ -*-===//
//
// libtx_emulator_runtime exports the mgpu* functions the host code of
// tx-to-nvvm calls (upstream MLIR 22.1's CUDA runtime ABI, the same as
// libtx_cuda_runtime) over an emulated device: memory is host memory,
// streams and events run in order, and kernels are the NVVM LLVM IR of
// tx-to-nvvm{format=llvm}, executed on the CPU with every thread of a block
// as a fiber. `tx-run --device=emulator` loads it in place of the CUDA
// runtime, so the host code is the one a real GPU runs.
//
// What it models: thread/block indices and sizes, lanes and warps,
// bar.sync (a barrier of the block's threads), shared memory (one buffer per
// block, filled with NaN bytes at every block start so reads of unwritten
// shared memory show), global atomics, ldmatrix and mma.sync (m16n8k16
// f16/bf16, m16n8k8 tf32, f32 accumulators) with the PTX ISA's fragment
// layouts, cvt.rna.tf32.f32. Every global and shared memory access is
// bounds-checked against the allocations it knows (device allocations,
// registered host memory, shared memory, module globals). A kernel that
// deadlocks (threads at different barriers, a thread exiting while others
// wait, a warp-collective with missing lanes), accesses memory out of
// bounds or uses an intrinsic the emulator does not implement is an error
// naming the kernel (and block and thread), never a hang or a silent result.
//
// What it cannot model: timing, memory ordering beyond barriers and atomics
// (blocks run one after another, threads of a block interleave only at
// barriers and warp-collectives), warp divergence other than at those
// points, wgmma/TMA (not implemented: named as unsupported).
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_EMULATOR_TXEMULATOR_H
#define TX_RUNTIME_EMULATOR_TXEMULATOR_H

#include <cstdint>
#include <string>

namespace tx::emulator {

/// Called with the message of every device error (e.g. "kernel
/// 'forward_kernel_3', block (0,1,0), thread (5,0,0): out-of-bounds 4-byte
/// load at ..."). The host code cannot check results, so the default
/// handler prints "tx-emulator: error: <message>" and exits with status 1.
using ErrorHandler = void (*)(const char *message);
/// A handler that does not return (e.g. jumps back to the caller of the
/// host code, as tx's runner does) ends the launch in progress. The C entry
/// point `txEmulatorSetErrorHandler` does the same, for hosts that load the
/// library at run time (the runner finds it by that name).
ErrorHandler setErrorHandler(ErrorHandler handler);

/// Counters since the process started, for tests and tools.
struct Statistics {
  uint64_t kernelsLaunched = 0;
  uint64_t blocksRun = 0;
  uint64_t threadsRun = 0;
  uint64_t barriers = 0;          // completed block barriers
  uint64_t warpCollectives = 0;   // executed warp-collective instructions
  uint64_t checkedAccesses = 0;   // bounds-checked memory accesses
  // What the host code asked of the device (the execution model's costs):
  uint64_t bytesHostToDevice = 0; // mgpuMemcpy from host to device memory
  uint64_t bytesDeviceToHost = 0;
  uint64_t bytesDeviceToDevice = 0;
  uint64_t bytesHostToHost = 0;
  uint64_t launches = 0;        // kernel launches the host issued (eager)
  uint64_t graphLaunches = 0;   // graph launches (one per graphed call)
  uint64_t graphsCaptured = 0;
  uint64_t eagerCalls = 0;      // graphed calls run eagerly (size not captured)
  uint64_t syncs = 0;           // stream and event synchronisations
  uint64_t allocations = 0;     // device allocations made
  uint64_t deviceBytesInUse = 0;
};
Statistics statistics();

// The same counters through a C entry point common to the tx device runtimes
// (libtx_cuda_runtime has it too), for hosts that load the library at run
// time: `uint64_t txGpuCounter(const char *name)` with name one of
// "bytes_h2d", "bytes_d2h", "bytes_d2d", "launches", "graph_launches",
// "graphs_captured", "eager_calls", "syncs", "allocations",
// "device_bytes_in_use" (UINT64_MAX for another name).

} // namespace tx::emulator

#endif // TX_RUNTIME_EMULATOR_TXEMULATOR_H
