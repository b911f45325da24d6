//===- CudaDriver.h - libcuda opened at run time ----------------*- C++ -*-===//
//
// Internal to the runtime: the driver entry points the wrappers use, resolved
// with dlsym from libcuda.so.1 (TX_LIBCUDA overrides the path, which is how
// the tests exercise a missing driver), and the error reporting they share.
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_CUDA_CUDADRIVER_H
#define TX_RUNTIME_CUDA_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace tx::cuda::detail {

// The entry point, and the versioned symbol cuda.h maps its name to.
#define TX_CUDA_DRIVER_FUNCTIONS(X)                                            \
  X(cuInit, "cuInit")                                                          \
  X(cuGetErrorName, "cuGetErrorName")                                          \
  X(cuGetErrorString, "cuGetErrorString")                                      \
  X(cuDeviceGetCount, "cuDeviceGetCount")                                      \
  X(cuDeviceGet, "cuDeviceGet")                                                \
  X(cuDeviceGetName, "cuDeviceGetName")                                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                              \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                      \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                        \
  X(cuModuleLoadData, "cuModuleLoadData")                                      \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx")                                  \
  X(cuModuleUnload, "cuModuleUnload")                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                  \
  X(cuLaunchKernel, "cuLaunchKernel")                                          \
  X(cuStreamCreate, "cuStreamCreate")                                          \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                                     \
  X(cuStreamSynchronize, "cuStreamSynchronize")                                \
  X(cuStreamWaitEvent, "cuStreamWaitEvent")                                    \
  X(cuEventCreate, "cuEventCreate")                                            \
  X(cuEventDestroy, "cuEventDestroy_v2")                                       \
  X(cuEventRecord, "cuEventRecord")                                            \
  X(cuEventSynchronize, "cuEventSynchronize")                                  \
  X(cuMemAlloc, "cuMemAlloc_v2")                                               \
  X(cuMemAllocManaged, "cuMemAllocManaged")                                    \
  X(cuMemFree, "cuMemFree_v2")                                                 \
  X(cuMemcpyAsync, "cuMemcpyAsync")                                            \
  X(cuMemsetD16Async, "cuMemsetD16Async")                                      \
  X(cuMemsetD32Async, "cuMemsetD32Async")                                      \
  X(cuMemHostRegister, "cuMemHostRegister_v2")                                 \
  X(cuMemHostUnregister, "cuMemHostUnregister")                                \
  X(cuPointerGetAttribute, "cuPointerGetAttribute")

struct Driver {
#define TX_CUDA_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  TX_CUDA_DRIVER_FUNCTIONS(TX_CUDA_DECLARE)
#undef TX_CUDA_DECLARE
  CUdevice device = 0;
  CUcontext context = nullptr;
};

/// The driver with the default device's primary context current on this
/// thread, or null after reporting why not ("<caller>: no CUDA driver ...").
const Driver *getDriver(const char *caller);

/// The reason getDriver() fails, empty when it succeeds (reports nothing).
std::string driverUnavailableReason();

/// Reports "<caller>: <message>" through the error handler.
void reportError(const char *caller, const std::string &message);

/// Checks a driver result; on failure reports "<caller>: <call> failed:
/// <CUDA_ERROR_NAME> (<description>)" and returns false.
bool check(CUresult result, const char *caller, const char *call);

} // namespace tx::cuda::detail

#endif // TX_RUNTIME_CUDA_CUDADRIVER_H
