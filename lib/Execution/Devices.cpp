//===- Devices.cpp - the devices tools run compiled modules on ------------===//

#include "TxDialect/Execution/Devices.h"
#include "TxDialect/Pipelines/CpuPipeline.h"
#include "TxDialect/Pipelines/GPUPipeline.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tx;

std::string tx::toolLibraryDir(const char *argv0) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::SmallString<256> dir(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(dir, "lib");
  return std::string(dir);
}

llvm::Expected<tx::Device> tx::selectDevice(llvm::StringRef name,
                                            llvm::StringRef libraryDir) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  if (name == "cpu")
    return Device{
        [](OpPassManager &pm) { buildTxToCPUPipeline(pm, TxToCPUOptions()); },
        kTxToCPUPipelineName.str(), /*isCPU=*/true, ""};
  bool emulator = name == "emulator";
  if (!emulator && name != "cuda")
    return error("--device must be cpu, cuda or emulator, not '" + name + "'");
  llvm::SmallString<256> library(libraryDir);
  llvm::sys::path::append(library, emulator ? "libtx_emulator_runtime.so"
                                   : "libtx_cuda_runtime.so");
  if (!llvm::sys::fs::exists(library))
    return error("--device=" + name + " needs '" + library + "'" +
                 (emulator ? " (built with tx)"
                           : " (built where the CUDA Toolkit's cuda.h is "
                             "found)"));
  // The emulated device runs the kernels' NVVM LLVM IR (format=llvm); it
  // has no libdevice, so kernel math is the polynomial one.
  auto build = [emulator](OpPassManager &pm) {
    TxToNVVMOptions options;
    if (emulator) {
      options.format = "llvm";
      options.math = "polynomial";
      options.cudaToolkit = "none";
    }
    buildTxToNVVMPipeline(pm, options);
  };
  // Named as a user would write it.
  std::string pipelineName = kTxToNVVMPipelineName.str();
  if (emulator)
    pipelineName += "{format=llvm math=polynomial cuda-toolkit=none}";
  return Device{build, pipelineName, /*isCPU=*/false, std::string(library)};
}
