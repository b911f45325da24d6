//===- TxCudaRuntime.h - the tx CUDA runtime, C++ API -----------*- C++ -*-===//
//
// The host code that tx-to-nvvm emits calls the mgpu* functions of this
// library (upstream MLIR's CUDA runtime ABI, 22.1 signatures). They run over
// the CUDA driver API with libcuda.so.1 opened at run time, so the library
// builds with the toolkit headers alone and loads on machines without a
// driver; there every call reports "no CUDA driver" instead of crashing.
//
// This header is the C++ side used by tools (tx-run --device=cuda): check
// that a device is usable before running anything, choose what happens on a
// CUDA error, and get the mgpu* symbols to register with a JIT.
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_CUDA_TXCUDARUNTIME_H
#define TX_RUNTIME_CUDA_TXCUDARUNTIME_H

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tx::cuda {

/// Loads the driver and opens the default device (once per process). False
/// with the reason (no libcuda, cuInit failure, no device) in `why`.
bool initialize(std::string *why = nullptr);

/// Name and compute capability of the default device, e.g. "NVIDIA H200
/// (sm_90)"; empty when initialize() fails.
std::string deviceDescription();

/// Called with the message of every failing CUDA call or rejected argument
/// (e.g. "mgpuLaunchKernel: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE
/// (invalid argument)"). The generated host code cannot check results, so
/// the default handler prints the message and exits with status 1; a
/// handler that returns makes the failing call return null / do nothing.
using ErrorHandler = void (*)(const char *message);
ErrorHandler setErrorHandler(ErrorHandler handler);

/// The last error message on this thread (empty if none); cleared by
/// clearLastError().
std::string lastError();
void clearLastError();

/// Selects the device used by later calls (mgpuSetDefaultDevice).
void setDefaultDevice(int device);

/// Every mgpu* entry point by name, for ExecutionEngine::registerSymbols.
std::vector<std::pair<const char *, void *>> runtimeSymbols();

} // namespace tx::cuda

#endif // TX_RUNTIME_CUDA_TXCUDARUNTIME_H
