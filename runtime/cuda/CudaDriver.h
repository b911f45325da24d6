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
  X(cuPointerGetAttribute, "cuPointerGetAttribute")                          \
  X(cuMemAllocAsync, "cuMemAllocAsync")                                        \
  X(cuMemFreeAsync, "cuMemFreeAsync")                                          \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2")                           \
  X(cuStreamEndCapture, "cuStreamEndCapture")                                  \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags")                         \
  X(cuGraphLaunch, "cuGraphLaunch")                                            \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")                                  \
  X(cuGraphDestroy, "cuGraphDestroy")

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

//===-- Counters and CUDA graphs (Graphs.cpp) ---------------------------===//

/// What the host code asked of the device, read with txGpuCounter.
struct Counters {
  uint64_t bytesHostToDevice = 0, bytesDeviceToHost = 0,
           bytesDeviceToDevice = 0, launches = 0, graphLaunches = 0,
           graphsCaptured = 0, eagerCalls = 0, syncs = 0, allocations = 0,
           deviceBytesInUse = 0;
};
Counters &counters();
void noteAllocation(void *ptr, uint64_t bytes);
void noteFree(void *ptr);
bool isDeviceMemory(const void *ptr);

/// The graph layer (cudagraph_mode = full): true when the launch or copy is
/// not to be issued now (a replay has it in its graph); a launch inside a
/// capture begins the capture on `stream`.
bool graphTakesLaunch(CUstream stream);
bool graphTakesCopy(CUstream stream, void *dst, const void *src);
/// A graphed call's allocation: the graph's buffer (null when not graphed).
void *graphAllocation(uint64_t bytes);
bool graphKeepsAllocation(void *ptr);

} // namespace tx::cuda::detail

#endif // TX_RUNTIME_CUDA_CUDADRIVER_H
