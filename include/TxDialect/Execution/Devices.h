//===- Devices.h - the devices tools run compiled modules on ----*- C++ -*-===//
//
// tx-run and tx-difftest run a module on the CPU (tx-to-cpu, the default),
// on a CUDA GPU (tx-to-nvvm, host code calling libtx_cuda_runtime) or on the
// emulated CUDA device (tx-to-nvvm{format=llvm math=polynomial}, host code
// calling libtx_emulator_runtime, kernels executed on the CPU). The runtime
// libraries live in `lib/` beside the tools' `bin/` (and beside
// libTxCompiler.so, for the C API and Python).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_DEVICES_H
#define TXDIALECT_EXECUTION_DEVICES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>

namespace mlir {
class OpPassManager;
namespace tx {

struct Device {
  /// The lowering when the user gives none, added to a pass manager on
  /// builtin.module by the pipeline's typed builder.
  std::function<void(OpPassManager &)> buildDefaultPipeline;
  /// That lowering as the user would write it, for messages ("tx-to-cpu").
  std::string defaultPipelineName;
  /// Whether the device is the CPU (tx-to-cpu and its options apply).
  bool isCPU = false;
  /// The runtime library the lowered host code calls (empty for the CPU).
  std::string runtimeLibrary;
};

/// The device named `name` ("cpu", "cuda" or "emulator"), its runtime
/// library found in `libraryDir`; an error naming the device or the missing
/// library otherwise.
llvm::Expected<Device> selectDevice(llvm::StringRef name,
                                    llvm::StringRef libraryDir);

/// The `lib/` beside the `bin/` of the executable `argv0` (where a tool
/// finds the runtime libraries).
std::string toolLibraryDir(const char *argv0);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_DEVICES_H
