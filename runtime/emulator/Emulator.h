//===- Emulator.h - the emulated CUDA device, internals ---------*- C++ -*-===//
//
// The emulated device runs the kernels of tx-to-nvvm{format=llvm}: the NVVM
// LLVM IR that would become PTX, retargeted to the host and JIT-compiled
// (KernelModule.cpp). Each thread of a block is a fiber (Launch.cpp), so
// barriers and warp-collective instructions (WarpOps.cpp) are exact. Every
// global and shared memory access of a kernel is checked against the
// allocations the device knows (Memory.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_EMULATOR_EMULATOR_H
#define TX_RUNTIME_EMULATOR_EMULATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tx::emulator {

struct Statistics;
Statistics &mutableStatistics();

/// Reports a fatal device error through the error handler (TxEmulator.h).
void reportError(const std::string &message);

//===-- Special registers and runtime entry points of the rewritten IR ----===//

/// The special registers `__txemu_sreg` reads (the codes the loader puts in
/// place of llvm.nvvm.read.ptx.sreg.*).
enum SpecialRegister : int32_t {
  kTidX, kTidY, kTidZ, kNtidX, kNtidY, kNtidZ,
  kCtaidX, kCtaidY, kCtaidZ, kNctaidX, kNctaidY, kNctaidZ,
  kLaneId, kWarpSize, kWarpId,
};

/// Warp-collective and per-thread intrinsics `__txemu_intrinsic` executes.
/// Arguments and results travel in 16-byte slots (one per operand or result
/// field), so the loader and the runtime agree on no struct layout.
enum IntrinsicKind : int32_t {
  kMmaM16N8K16F16,  // mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
  kMmaM16N8K16BF16, // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  kMmaM16N8K8TF32,  // mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
  kLdMatrixX1, kLdMatrixX2, kLdMatrixX4,
  kLdMatrixX1Trans, kLdMatrixX2Trans, kLdMatrixX4Trans,
  kCvtRnaTF32, // cvt.rna.tf32.f32 (per thread)
};
constexpr int kSlotBytes = 16;
constexpr int kMaxSlots = 16;

bool isWarpCollective(IntrinsicKind kind);
const char *intrinsicName(IntrinsicKind kind);

/// Executes a warp-collective intrinsic for the 32 lanes of a warp: `args[l]`
/// and `results[l]` are lane l's slots.
void executeWarpCollective(IntrinsicKind kind, char *const *args,
                           char *const *results);
/// Executes a per-thread intrinsic.
void executeThreadIntrinsic(IntrinsicKind kind, const char *args,
                            char *results);

//===-- Memory the device knows ----------------------------------------===//

/// FreedDevice: a device allocation freed while its memory is still held
/// back (quarantined, Graphs.cpp), so that a late use of it is reported.
enum class RegionKind {
  DeviceAlloc,
  HostRegistered,
  Shared,
  ModuleGlobal,
  FreedDevice
};

void addRegion(const void *start, uint64_t bytes, RegionKind kind,
               std::string name = {});
/// True when `address` lies in a device allocation (mgpuMemAlloc), live or
/// freed.
bool isDeviceMemory(const void *address);
/// True when `address` lies in host memory registered with the device.
bool isRegisteredHostMemory(const void *address);
void removeRegion(const void *start);
/// The device allocation at `start` was freed: its region stays, as
/// FreedDevice, until removeRegion.
void retireRegion(const void *start);
/// Checks a copy's or memset's range on the host side of the device
/// (`what`: "mgpuMemcpy source", ...): a range that starts in a device
/// allocation must end in it, and none may touch freed device memory.
/// Host memory the device does not know is not checked (cudaMemcpy takes
/// pageable host memory). False (after reporting) when the range is bad.
bool checkTransfer(const void *address, uint64_t bytes, const char *what);
/// How a checked access uses memory (race tracking in shared memory).
enum class AccessKind : int32_t {
  Load,     // a thread reads
  Store,    // a thread writes
  Atomic,   // an atomic read-modify-write (never a race with another)
  WarpLoad, // a warp-collective read (ldmatrix) for the current warp
};
const char *accessName(AccessKind kind);

/// Checks that [address, address + bytes) lies in one known region, and in
/// shared memory that no other thread wrote (or, for a write, read or
/// wrote) those bytes since the block's last barrier: a missing bar.sync
/// is a race the emulator reports, whatever order it runs threads in.
/// `function` names the kernel function of the access, for messages.
void checkAccess(const void *address, uint64_t bytes, AccessKind kind,
                 const char *function);

/// The block's barrier epoch: new at every block start and completed
/// barrier (never reused, so shadow state of earlier blocks is stale).
uint64_t currentEpoch();
/// The current thread's linear id in its block (-1 on the host).
int currentThreadId();

//===-- Device memory and CUDA graphs (Graphs.cpp) -----------------------===//

struct Kernel;

/// Device memory of the emulated device (mgpuMemAlloc/mgpuMemFree), within
/// the limit TX_EMULATOR_MEMORY sets (bytes; unlimited when unset). It is
/// mapped inaccessible (PROT_NONE) except while the device works on it (a
/// DeviceAccess scope): host code that loads or stores device memory
/// faults, as it would on a GPU, and the fault is reported as a device
/// error naming the allocation (TX_EMULATOR_PROTECT=0 leaves it readable).
void *allocateDeviceMemory(uint64_t bytes);
void freeDeviceMemory(void *ptr);

/// While one exists, device memory is readable and writable: around kernel
/// launches, copies, memsets and graph launches. Scopes nest.
class DeviceAccess {
public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess &) = delete;
  DeviceAccess &operator=(const DeviceAccess &) = delete;
};
/// Ends every DeviceAccess scope at once (an error leaves them by a jump
/// that runs no destructor).
void endDeviceAccess();

/// What the graph layer does with an operation of the host code: run it now
/// (eager, or nothing captured), or nothing (recorded by a capture, or part
/// of a graph being replayed).
bool graphTakesLaunch(Kernel *kernel, const intptr_t grid[3],
                      const intptr_t block[3], int32_t smem, void **params);
bool graphTakesCopy(void *dst, const void *src, size_t bytes);
bool graphTakesMemset(void *dst, uint32_t value, size_t count, int width);
/// Allocation inside a graphed call: the graph's own buffer (null when the
/// call is not graphed).
void *graphAllocation(uint64_t bytes);
bool graphKeepsAllocation(void *ptr);

//===-- The stream (Stream.cpp) --------------------------------------------===//

/// One piece of device work, as the stream queues it and a CUDA graph
/// records it: a kernel launch (its arguments copied), a copy, a memset or
/// a free.
struct DeviceOp {
  enum Kind { Launch, Copy, Memset, Free } kind;
  Kernel *kernel = nullptr;
  intptr_t grid[3] = {}, block[3] = {};
  int32_t smem = 0;
  std::vector<std::vector<char>> params;
  void *dst = nullptr;
  const void *src = nullptr;
  size_t bytes = 0; // copy bytes, or memset count
  uint32_t value = 0;
  int width = 0;
  std::vector<char> staged; // a pageable copy source, taken at the call

  /// A launch of `kernel`, its arguments read now.
  static DeviceOp launchOf(Kernel *kernel, const intptr_t grid[3],
                           const intptr_t block[3], int32_t smem,
                           void **params);
  static DeviceOp copyOf(void *dst, const void *src, size_t bytes);
  static DeviceOp memsetOf(void *dst, uint32_t value, size_t count,
                           int width);
};
/// Runs `op` now (ranges checked first).
void runDeviceOp(const DeviceOp &op);

/// The host code's device work, run in order when the host synchronises
/// (or must see it: a copy to pageable host memory, a graph launch, a
/// module unload), as a GPU runs it asynchronously. TX_EMULATOR_SYNC=1
/// runs each at its call instead.
void streamLaunch(Kernel *kernel, const intptr_t grid[3],
                  const intptr_t block[3], int32_t smem, void **params);
void streamCopy(void *dst, const void *src, size_t bytes);
void streamMemset(void *dst, uint32_t value, size_t count, int width);
void streamFree(void *ptr);
void synchronizeStream();
/// Drops the queued work (an error ended the call).
void abandonStream();

//===-- Kernel modules and launches -------------------------------------===//

struct Kernel;
struct KernelModule;

/// Never null: a module that cannot run keeps the reason, reported when one
/// of its kernels is looked up.
KernelModule *loadModule(const void *data, size_t size);
KernelModule *failedModule(const std::string &why);
void unloadModule(KernelModule *module);
Kernel *getFunction(KernelModule *module, const char *name);
/// Fills the module's shared memory with 0xff bytes (f32/f16 NaN), as a new
/// block finds it: reads of shared memory no thread wrote show.
void resetSharedMemory(KernelModule *module);
void launch(Kernel *kernel, const intptr_t grid[3], const intptr_t block[3],
            int32_t dynamicSharedBytes, void **params, size_t numParams);

/// What the loader knows of a kernel.
struct Kernel {
  std::string name;
  void (*entry)(void **params) = nullptr; // unpacks params, calls the kernel
  size_t numParams = 0;
  std::vector<size_t> paramBytes; // the size of each parameter
  bool needsFibers = false; // uses barriers or warp-collectives
  KernelModule *module = nullptr;
};

/// "kernel 'k', block (x,y,z), thread (x,y,z)" of the thread running now
/// ("host" outside a launch), for messages.
std::string describeCurrentThread();

} // namespace tx::emulator

#endif // TX_RUNTIME_EMULATOR_EMULATOR_H
