//===- MgpuWrappers.cpp - the mgpu* ABI the lowered host code calls -------===//
//
// Signatures as in upstream MLIR 22.1's CudaRuntimeWrappers.cpp (the ones
// gpu-to-llvm and the gpu.binary offloading translation emit calls to).
// Unlike upstream, every argument that would make the driver misbehave is
// rejected first and every failure names the mgpu function and driver call.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "TxCudaRuntime.h"
#include "TxMemRefExtent.h"

#include <cstdint>
#include <cstring>
#include <string>

using namespace tx::cuda;
using namespace tx::cuda::detail;
using tx::runtime::MemRefDescriptorPrefix;
using tx::runtime::memRefBytes;
using tx::runtime::memRefData;

#define TX_EXPORT extern "C" __attribute__((visibility("default")))

// Graphs.cpp.
TX_EXPORT void txGpuGraphBegin(void **slotAddress, int64_t key,
                               int32_t captured);
TX_EXPORT void txGpuGraphEnd(void **slotAddress);
TX_EXPORT void txGpuGraphRelease(void **slotAddress);
TX_EXPORT uint64_t txGpuCounter(const char *name);
TX_EXPORT void txGpuWeightsReleased();

namespace {
bool checkDims(const char *caller, const char *what, intptr_t x, intptr_t y,
               intptr_t z, intptr_t maxX, intptr_t maxYZ) {
  if (x >= 1 && y >= 1 && z >= 1 && x <= maxX && y <= maxYZ && z <= maxYZ)
    return true;
  reportError(caller, std::string("invalid ") + what + " size (" +
                          std::to_string(x) + ", " + std::to_string(y) + ", " +
                          std::to_string(z) + ")");
  return false;
}
} // namespace

TX_EXPORT CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  if (!data) {
    reportError("mgpuModuleLoad", "null module image");
    return nullptr;
  }
  const Driver *d = getDriver("mgpuModuleLoad");
  if (!d)
    return nullptr;
  CUmodule module = nullptr;
  if (!check(d->cuModuleLoadData(&module, data), "mgpuModuleLoad",
             "cuModuleLoadData"))
    return nullptr;
  return module;
}

TX_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  if (!data) {
    reportError("mgpuModuleLoadJIT", "null PTX");
    return nullptr;
  }
  const Driver *d = getDriver("mgpuModuleLoadJIT");
  if (!d)
    return nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CUmodule module = nullptr;
  CUresult r = d->cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS && log[0]) {
    reportError("mgpuModuleLoadJIT",
                std::string("PTX JIT compilation failed: ") + log);
    return nullptr;
  }
  if (!check(r, "mgpuModuleLoadJIT", "cuModuleLoadDataEx"))
    return nullptr;
  return module;
}

TX_EXPORT void mgpuModuleUnload(CUmodule module) {
  if (!module)
    return;
  if (const Driver *d = getDriver("mgpuModuleUnload"))
    check(d->cuModuleUnload(module), "mgpuModuleUnload", "cuModuleUnload");
}

TX_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  if (!module || !name) {
    reportError("mgpuModuleGetFunction",
                module ? "null kernel name"
                       : "null module (did mgpuModuleLoad fail?)");
    return nullptr;
  }
  const Driver *d = getDriver("mgpuModuleGetFunction");
  if (!d)
    return nullptr;
  CUfunction function = nullptr;
  if (!check(d->cuModuleGetFunction(&function, module, name),
             "mgpuModuleGetFunction",
             (std::string("cuModuleGetFunction(\"") + name + "\")").c_str()))
    return nullptr;
  return function;
}

TX_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                intptr_t gridY, intptr_t gridZ,
                                intptr_t blockX, intptr_t blockY,
                                intptr_t blockZ, int32_t smem, CUstream stream,
                                void **params, void **extra,
                                size_t paramsCount) {
  const char *caller = "mgpuLaunchKernel";
  if (!function) {
    reportError(caller, "null kernel function (did mgpuModuleGetFunction "
                        "fail?)");
    return;
  }
  if (!checkDims(caller, "grid", gridX, gridY, gridZ, INT32_MAX, 65535) ||
      !checkDims(caller, "block", blockX, blockY, blockZ, 1024, 1024))
    return;
  if (blockZ > 64 || blockX * blockY * blockZ > 1024) {
    reportError(caller, "block of " +
                            std::to_string(blockX * blockY * blockZ) +
                            " threads (z " + std::to_string(blockZ) +
                            ") exceeds the CUDA limit of 1024 (z <= 64)");
    return;
  }
  if (smem < 0) {
    reportError(caller, "negative dynamic shared memory size " +
                            std::to_string(smem));
    return;
  }
  if (paramsCount > 0 && !params) {
    reportError(caller, std::to_string(paramsCount) +
                            " kernel parameters but a null parameter array");
    return;
  }
  const Driver *d = getDriver(caller);
  if (!d)
    return;
  // More than the static 48 KiB of dynamic shared memory needs an opt-in.
  if (smem > 48 * 1024 &&
      !check(d->cuFuncSetAttribute(
                 function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                 smem),
             caller, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))
    return;
  // A replayed CUDA graph has the launch; a capture records it.
  if (graphTakesLaunch(stream))
    return;
  if (check(d->cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                              blockZ, smem, stream, params, extra),
            caller, "cuLaunchKernel"))
    ++counters().launches;
}

TX_EXPORT CUstream mgpuStreamCreate() {
  const Driver *d = getDriver("mgpuStreamCreate");
  if (!d)
    return nullptr;
  CUstream stream = nullptr;
  if (!check(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
             "mgpuStreamCreate", "cuStreamCreate"))
    return nullptr;
  return stream;
}

TX_EXPORT void mgpuStreamDestroy(CUstream stream) {
  if (!stream)
    return;
  if (const Driver *d = getDriver("mgpuStreamDestroy"))
    check(d->cuStreamDestroy(stream), "mgpuStreamDestroy", "cuStreamDestroy");
}

TX_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  // Kernel faults surface here: the message names the synchronisation.
  ++counters().syncs;
  if (const Driver *d = getDriver("mgpuStreamSynchronize"))
    check(d->cuStreamSynchronize(stream), "mgpuStreamSynchronize",
          "cuStreamSynchronize");
}

TX_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (!event) {
    reportError("mgpuStreamWaitEvent", "null event");
    return;
  }
  if (const Driver *d = getDriver("mgpuStreamWaitEvent"))
    check(d->cuStreamWaitEvent(stream, event, /*flags=*/0),
          "mgpuStreamWaitEvent", "cuStreamWaitEvent");
}

TX_EXPORT CUevent mgpuEventCreate() {
  const Driver *d = getDriver("mgpuEventCreate");
  if (!d)
    return nullptr;
  CUevent event = nullptr;
  if (!check(d->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
             "mgpuEventCreate", "cuEventCreate"))
    return nullptr;
  return event;
}

TX_EXPORT void mgpuEventDestroy(CUevent event) {
  if (!event)
    return;
  if (const Driver *d = getDriver("mgpuEventDestroy"))
    check(d->cuEventDestroy(event), "mgpuEventDestroy", "cuEventDestroy");
}

TX_EXPORT void mgpuEventSynchronize(CUevent event) {
  if (!event) {
    reportError("mgpuEventSynchronize", "null event");
    return;
  }
  ++counters().syncs;
  if (const Driver *d = getDriver("mgpuEventSynchronize"))
    check(d->cuEventSynchronize(event), "mgpuEventSynchronize",
          "cuEventSynchronize");
}

TX_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  if (!event) {
    reportError("mgpuEventRecord", "null event");
    return;
  }
  if (const Driver *d = getDriver("mgpuEventRecord"))
    check(d->cuEventRecord(event, stream), "mgpuEventRecord", "cuEventRecord");
}

TX_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                             bool isHostShared) {
  // Zero-sized memrefs (an empty token range) need no allocation.
  if (sizeBytes == 0)
    return nullptr;
  if (!isHostShared)
    if (void *p = graphAllocation(sizeBytes))
      return p;
  const Driver *d = getDriver("mgpuMemAlloc");
  if (!d)
    return nullptr;
  CUdeviceptr ptr = 0;
  std::string bytes = "(" + std::to_string(sizeBytes) + " bytes)";
  // On a stream: stream-ordered (the allocation and its free wait for the
  // work before them on the stream, not for the whole device).
  bool ok = isHostShared
                ? check(d->cuMemAllocManaged(&ptr, sizeBytes,
                                             CU_MEM_ATTACH_GLOBAL),
                        "mgpuMemAlloc", ("cuMemAllocManaged" + bytes).c_str())
            : stream ? check(d->cuMemAllocAsync(&ptr, sizeBytes, stream),
                             "mgpuMemAlloc", ("cuMemAllocAsync" + bytes).c_str())
                     : check(d->cuMemAlloc(&ptr, sizeBytes), "mgpuMemAlloc",
                             ("cuMemAlloc" + bytes).c_str());
  if (!ok)
    return nullptr;
  noteAllocation(reinterpret_cast<void *>(ptr), sizeBytes);
  return reinterpret_cast<void *>(ptr);
}

TX_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr || graphKeepsAllocation(ptr))
    return;
  noteFree(ptr);
  if (const Driver *d = getDriver("mgpuMemFree")) {
    if (stream)
      check(d->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), stream),
            "mgpuMemFree", "cuMemFreeAsync");
    else
      check(d->cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "mgpuMemFree",
            "cuMemFree");
  }
}

TX_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                          CUstream stream) {
  if (sizeBytes == 0)
    return;
  if (!dst || !src) {
    reportError("mgpuMemcpy", std::string("null ") + (dst ? "source" : "destination") +
                                  " for a copy of " +
                                  std::to_string(sizeBytes) + " bytes");
    return;
  }
  if (graphTakesCopy(stream, dst, src))
    return;
  bool toDevice = isDeviceMemory(dst), fromDevice = isDeviceMemory(src);
  Counters &c = counters();
  if (toDevice && fromDevice)
    c.bytesDeviceToDevice += sizeBytes;
  else if (toDevice)
    c.bytesHostToDevice += sizeBytes;
  else if (fromDevice)
    c.bytesDeviceToHost += sizeBytes;
  if (const Driver *d = getDriver("mgpuMemcpy"))
    check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                           stream),
          "mgpuMemcpy", "cuMemcpyAsync");
}

TX_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                            CUstream stream) {
  if (count == 0)
    return;
  if (!dst) {
    reportError("mgpuMemset32", "null destination");
    return;
  }
  if (const Driver *d = getDriver("mgpuMemset32"))
    check(d->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "mgpuMemset32", "cuMemsetD32Async");
}

TX_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                            CUstream stream) {
  if (count == 0)
    return;
  if (!dst) {
    reportError("mgpuMemset16", "null destination");
    return;
  }
  if (const Driver *d = getDriver("mgpuMemset16"))
    check(d->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "mgpuMemset16", "cuMemsetD16Async");
}

TX_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  if (!ptr || sizeBytes == 0)
    return;
  const Driver *d = getDriver("mgpuMemHostRegister");
  if (!d)
    return;
  // Device and managed memory (a caller that keeps data on the GPU) is
  // already accessible: nothing to register.
  unsigned memoryType = 0;
  if (d->cuPointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                               reinterpret_cast<CUdeviceptr>(ptr)) ==
          CUDA_SUCCESS &&
      memoryType == CU_MEMORYTYPE_DEVICE)
    return;
  int isManaged = 0;
  if (d->cuPointerGetAttribute(&isManaged, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                               reinterpret_cast<CUdeviceptr>(ptr)) ==
          CUDA_SUCCESS &&
      isManaged)
    return;
  CUresult r = d->cuMemHostRegister(ptr, sizeBytes, /*flags=*/0);
  // Registering the same buffer twice (a weight used by two calls) is fine.
  if (r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    check(r, "mgpuMemHostRegister", "cuMemHostRegister");
}

TX_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (!ptr)
    return;
  const Driver *d = getDriver("mgpuMemHostUnregister");
  if (!d)
    return;
  CUresult r = d->cuMemHostUnregister(ptr);
  // Memory mgpuMemHostRegister skipped (device or managed) was never
  // registered.
  if (r != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
    check(r, "mgpuMemHostUnregister", "cuMemHostUnregister");
}

TX_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank,
                                         MemRefDescriptorPrefix *descriptor,
                                         int64_t elementSizeBytes) {
  if (!descriptor || rank < 0 || elementSizeBytes <= 0) {
    reportError("mgpuMemHostRegisterMemRef", "invalid memref descriptor");
    return;
  }
  mgpuMemHostRegister(memRefData(descriptor, elementSizeBytes),
                      memRefBytes(rank, descriptor, elementSizeBytes));
}

TX_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                           MemRefDescriptorPrefix *descriptor,
                                           int64_t elementSizeBytes) {
  if (!descriptor) {
    reportError("mgpuMemHostUnregisterMemRef", "invalid memref descriptor");
    return;
  }
  mgpuMemHostUnregister(memRefData(descriptor, elementSizeBytes));
}

TX_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  if (device < 0) {
    reportError("mgpuSetDefaultDevice",
                "negative device ordinal " + std::to_string(device));
    return;
  }
  setDefaultDevice(device);
}

std::vector<std::pair<const char *, void *>> tx::cuda::runtimeSymbols() {
#define TX_SYMBOL(fn) {#fn, reinterpret_cast<void *>(&fn)}
  return {TX_SYMBOL(mgpuModuleLoad),
          TX_SYMBOL(mgpuModuleLoadJIT),
          TX_SYMBOL(mgpuModuleUnload),
          TX_SYMBOL(mgpuModuleGetFunction),
          TX_SYMBOL(mgpuLaunchKernel),
          TX_SYMBOL(mgpuStreamCreate),
          TX_SYMBOL(mgpuStreamDestroy),
          TX_SYMBOL(mgpuStreamSynchronize),
          TX_SYMBOL(mgpuStreamWaitEvent),
          TX_SYMBOL(mgpuEventCreate),
          TX_SYMBOL(mgpuEventDestroy),
          TX_SYMBOL(mgpuEventSynchronize),
          TX_SYMBOL(mgpuEventRecord),
          TX_SYMBOL(mgpuMemAlloc),
          TX_SYMBOL(mgpuMemFree),
          TX_SYMBOL(mgpuMemcpy),
          TX_SYMBOL(mgpuMemset32),
          TX_SYMBOL(mgpuMemset16),
          TX_SYMBOL(mgpuMemHostRegister),
          TX_SYMBOL(mgpuMemHostUnregister),
          TX_SYMBOL(mgpuMemHostRegisterMemRef),
          TX_SYMBOL(mgpuMemHostUnregisterMemRef),
          TX_SYMBOL(mgpuSetDefaultDevice),
          TX_SYMBOL(txGpuGraphBegin),
          TX_SYMBOL(txGpuGraphEnd),
          TX_SYMBOL(txGpuGraphRelease),
          TX_SYMBOL(txGpuCounter),
          TX_SYMBOL(txGpuWeightsReleased)};
#undef TX_SYMBOL
}
