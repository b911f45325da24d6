//===- MgpuWrappers.cpp - the mgpu* ABI over the emulated device ----------===//
//
// The functions the host code of tx-to-nvvm calls (upstream MLIR 22.1
// signatures, as in runtime/cuda), executed by the emulated device: memory
// is host memory the device tracks (device allocations within
// TX_EMULATOR_MEMORY), work goes into one in-order stream that runs when
// the host synchronises (Stream.cpp), or is recorded and replayed as CUDA
// graphs (Graphs.cpp). Every call counts
// what crossed between host and device (txGpuCounter).
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"
#include "TxEmulator.h"
#include "TxMemRefExtent.h"

#include <cstdlib>
#include <cstring>

using namespace tx::emulator;
using tx::runtime::MemRefDescriptorPrefix;
using tx::runtime::memRefBytes;
using tx::runtime::memRefData;

#define TX_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
// Streams and events are handles only: work completes in order, at once.
char streamTag, eventTag;
} // namespace

TX_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  if (!data) {
    reportError("mgpuModuleLoad: null module image");
    return nullptr;
  }
  return loadModule(data, size);
}

TX_EXPORT void *mgpuModuleLoadJIT(void *, int) {
  return failedModule("the emulated device does not run PTX; compile with "
                      "tx-to-nvvm{format=llvm}");
}

TX_EXPORT void mgpuModuleUnload(void *module) {
  synchronizeStream();
  unloadModule(static_cast<KernelModule *>(module));
}

TX_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module || !name) {
    reportError("mgpuModuleGetFunction: null module or name");
    return nullptr;
  }
  return getFunction(static_cast<KernelModule *>(module), name);
}

TX_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ, int32_t smem,
                                void * /*stream*/, void **params,
                                void ** /*extra*/, size_t paramsCount) {
  if (!function)
    return reportError("mgpuLaunchKernel: null kernel");
  intptr_t grid[3] = {gridX, gridY, gridZ};
  intptr_t block[3] = {blockX, blockY, blockZ};
  for (int d = 0; d < 3; ++d)
    if (grid[d] < 1 || block[d] < 1 || grid[d] > (1LL << 31) - 1 ||
        block[d] > 1024)
      return reportError("mgpuLaunchKernel: invalid grid (" +
                         std::to_string(gridX) + "," + std::to_string(gridY) +
                         "," + std::to_string(gridZ) + ") or block (" +
                         std::to_string(blockX) + "," + std::to_string(blockY) +
                         "," + std::to_string(blockZ) + ") size");
  if (blockX * blockY * blockZ > 1024)
    return reportError("mgpuLaunchKernel: " +
                       std::to_string(blockX * blockY * blockZ) +
                       " threads per block (at most 1024)");
  auto *kernel = static_cast<Kernel *>(function);
  if (paramsCount != kernel->numParams)
    return reportError("mgpuLaunchKernel: kernel '" + kernel->name +
                       "' takes " + std::to_string(kernel->numParams) +
                       " parameters, the launch passes " +
                       std::to_string(paramsCount));
  if (graphTakesLaunch(kernel, grid, block, smem, params))
    return;
  ++mutableStatistics().launches;
  streamLaunch(kernel, grid, block, smem, params);
}

TX_EXPORT void *mgpuStreamCreate() { return &streamTag; }
TX_EXPORT void mgpuStreamDestroy(void *) {}
TX_EXPORT void mgpuStreamSynchronize(void *) {
  ++mutableStatistics().syncs;
  synchronizeStream();
}
TX_EXPORT void mgpuStreamWaitEvent(void *, void *) {}
TX_EXPORT void *mgpuEventCreate() { return &eventTag; }
TX_EXPORT void mgpuEventDestroy(void *) {}
TX_EXPORT void mgpuEventSynchronize(void *) {
  ++mutableStatistics().syncs;
  synchronizeStream();
}
TX_EXPORT void mgpuEventRecord(void *, void *) {}

TX_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                             bool /*isHostShared*/) {
  if (sizeBytes == 0)
    return nullptr;
  if (void *p = graphAllocation(sizeBytes))
    return p;
  return allocateDeviceMemory(sizeBytes);
}

TX_EXPORT void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr || graphKeepsAllocation(ptr))
    return;
  streamFree(ptr);
}

TX_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                          void * /*stream*/) {
  if (sizeBytes == 0)
    return;
  if (!dst || !src)
    return reportError("mgpuMemcpy: null pointer");
  if (!checkTransfer(dst, sizeBytes, "mgpuMemcpy destination") ||
      !checkTransfer(src, sizeBytes, "mgpuMemcpy source"))
    return;
  if (graphTakesCopy(dst, src, sizeBytes))
    return;
  Statistics &stats = mutableStatistics();
  bool toDevice = isDeviceMemory(dst), fromDevice = isDeviceMemory(src);
  (toDevice && fromDevice ? stats.bytesDeviceToDevice
   : toDevice             ? stats.bytesHostToDevice
   : fromDevice           ? stats.bytesDeviceToHost
                          : stats.bytesHostToHost) += sizeBytes;
  streamCopy(dst, src, sizeBytes);
}

TX_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                            void * /*stream*/) {
  if (count == 0)
    return;
  if (!dst)
    return reportError("mgpuMemset32: null pointer");
  if (!checkTransfer(dst, count * 4, "mgpuMemset32 destination"))
    return;
  if (graphTakesMemset(dst, value, count, 4))
    return;
  streamMemset(dst, value, count, 4);
}

TX_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                            void * /*stream*/) {
  if (count == 0)
    return;
  if (!dst)
    return reportError("mgpuMemset16: null pointer");
  if (!checkTransfer(dst, count * 2, "mgpuMemset16 destination"))
    return;
  if (graphTakesMemset(dst, value, count, 2))
    return;
  streamMemset(dst, value, count, 2);
}

TX_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  addRegion(ptr, sizeBytes, RegionKind::HostRegistered);
}

TX_EXPORT void mgpuMemHostUnregister(void *ptr) {
  synchronizeStream(); // queued copies may still use it
  if (ptr)
    removeRegion(ptr);
}

TX_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank,
                                         MemRefDescriptorPrefix *descriptor,
                                         int64_t elementSizeBytes) {
  if (!descriptor || rank < 0 || elementSizeBytes <= 0)
    return reportError("mgpuMemHostRegisterMemRef: invalid memref descriptor");
  mgpuMemHostRegister(memRefData(descriptor, elementSizeBytes),
                      memRefBytes(rank, descriptor, elementSizeBytes));
}

TX_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                           MemRefDescriptorPrefix *descriptor,
                                           int64_t elementSizeBytes) {
  if (!descriptor)
    return reportError("mgpuMemHostUnregisterMemRef: invalid memref "
                       "descriptor");
  (void)rank;
  mgpuMemHostUnregister(memRefData(descriptor, elementSizeBytes));
}

TX_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  if (device != 0)
    reportError("mgpuSetDefaultDevice: the emulated device is device 0, not " +
                std::to_string(device));
}
