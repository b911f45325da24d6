//===- GPUPipeline.cpp - the tx-to-nvvm pipeline --------------------------===//

#include "TxDialect/Pipelines/GPUPipeline.h"
#include "TxDialect/Codegen/GPUTarget.h"
#include "TxDialect/Conversion/CollectivesToRuntime.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tx {
#define GEN_PASS_REGISTRATION
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

/// tx-gpu-tile-contractions' options as tx-to-nvvm runs it: on the
/// pipeline's chip.
static TxGPUTileContractionsOptions
gemmOptions(const TxToNVVMOptions &options, TxGPUTileContractionsOptions gemm) {
  gemm.chip = options.chip;
  return gemm;
}

/// The pipeline, with `gemm` the tx-gpu-tile-contractions pass it runs and
/// `deviceBuffers` the tx-gpu-device-buffers pass it runs with memory=device.
static void addTxToNVVMPasses(OpPassManager &pm, const TxToNVVMOptions &options,
                              std::unique_ptr<Pass> gemm,
                              std::unique_ptr<Pass> deviceBuffers) {
  std::string features = options.features.empty()
                             ? defaultPTXFeature(options.chip)
                             : std::string(options.features);
  // cuda-toolkit=none: no toolkit directory and no libdevice (tools such as
  // ptxas may still come from PATH).
  bool noToolkit = options.cudaToolkit == "none";
  std::string toolkit = noToolkit                     ? std::string()
                        : options.cudaToolkit.empty() ? findCUDAToolkit()
                                                      : std::string(options.cudaToolkit);
  StringRef math = options.math;
  std::string libdevice = math == "polynomial" || noToolkit
                              ? std::string()
                              : findLibdevice(toolkit);
  bool approximate =
      math == "polynomial" || (math == "auto" && libdevice.empty());
  TxGPUCheckTargetOptions target;
  target.toolkit = toolkit;
  target.chip = options.chip;
  target.features = features;
  target.format = options.format;
  target.math = options.math;
  target.memory = options.memory;
  pm.addPass(createTxGPUCheckTarget(target));

  // Collectives over several ranks become calls of the collectives runtime
  // (tx-gpu-device-buffers puts them on the call's stream).
  pm.addPass(createTxLowerCollectivesToRuntime());
  pm.addPass(createTxToLinalg());
  // Intermediate buffers are freed after their last use, as on the CPU
  // (kernels run synchronously in the host code, so the last use on the
  // host is the last use); tx-gpu-host-register unregisters each before
  // its dealloc. Returned buffers are made contiguous first.
  if (options.deallocate) {
    pm.addPass(createTxReturnContiguous());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // As on the CPU: blocks become scf ops before the deallocation.
    pm.addPass(createLiftControlFlowToSCFPass());
    bufferization::buildBufferDeallocationPipeline(
        pm, bufferization::BufferDeallocationPipelineOptions());
    pm.addPass(createConvertBufferizationToMemRefPass());
  }
  // memref.copy (the program's, or a clone's) becomes linalg.copy, which
  // runs as a kernel below, as on the CPU: the host code needs no runtime's
  // memrefCopy.
  pm.addPass(createTxCopiesToLinalg());
  // Public functions get the _mlir_ciface_ wrappers tx-run calls.
  pm.addPass(createTxEmitCInterface());
  pm.addPass(createCanonicalizerPass());

  // GEMMs first: they get the shared-memory tiled kernel; everything else
  // (norms, elementwise, fills, copies) takes the parallel-loop path below.
  pm.addPass(std::move(gemm));

  // Reductions stay sequential loops inside the parallel dimensions; the
  // tiling without min/max bounds keeps the block size static (a dynamic
  // token count would otherwise stop convert-parallel-loops-to-gpu).
  SmallVector<int64_t> loopTiles =
      options.loopTileSizes.empty()
          ? SmallVector<int64_t>{16, 16}
          : SmallVector<int64_t>(options.loopTileSizes.begin(),
                                 options.loopTileSizes.end());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createParallelLoopTilingPass(loopTiles, /*noMinMaxBounds=*/true));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addPass(createConvertParallelLoopToGpuPass());
  // Device-resident weights and activations (the default), or host buffers
  // mapped for the kernels.
  if (options.memory == "host-mapped") {
    pm.addPass(createTxGPUHostRegister());
  } else {
    pm.addPass(std::move(deviceBuffers));
  }
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  // ldmatrix reads 16-byte rows of the shared tiles.
  pm.addNestedPass<gpu::GPUModuleOp>(createTxGPUAlignWorkgroupBuffers());

  // gpu-lower-to-nvvm-pipeline, spelled out so that the toolkit is explicit:
  // libdevice linked into every kernel module (math functions) and ptxas
  // found without CUDA_HOME.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Without libdevice, kernel math is approximated before the module-level
  // conversions lower the arith it expands into.
  if (approximate)
    pm.addNestedPass<gpu::GPUModuleOp>(createTxGPUApproximateMath());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions attach;
  attach.triple = "nvptx64-nvidia-cuda";
  attach.chip = options.chip;
  attach.features = features;
  attach.optLevel = options.optLevel;
  if (!libdevice.empty())
    attach.linkLibs.push_back(libdevice);
  pm.addPass(createGpuNVVMAttachTarget(attach));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions indexToLLVM;
  indexToLLVM.indexBitwidth = 64;
  pm.addPass(createConvertIndexToLLVMPass(indexToLLVM));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createStripDebugInfoPass());
  ConvertGpuOpsToNVVMOpsOptions gpuToNVVM;
  gpuToNVVM.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(gpuToNVVM));
  kernels.addPass(LLVM::createNVVMOptimizeForTargetPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  TxGPUCheckLibdeviceOptions libdeviceCheck;
  libdeviceCheck.libdevice = libdevice;
  pm.addPass(createTxGPUCheckLibdevice(libdeviceCheck));
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = options.format;
  toBinary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void tx::buildTxToNVVMPipeline(OpPassManager &pm,
                               const TxToNVVMOptions &options) {
  addTxToNVVMPasses(
      pm, options,
      createTxGPUTileContractions(gemmOptions(options, options.gemm)),
      createTxGPUDeviceBuffers(options.deviceBuffers));
}

/// tx-to-nvvm{...}'s passes with options of their own: the entries that are
/// not the pipeline's go to the one that declares them, parsed over the
/// values the pipeline gives it (the chip, split-k-blocks=256).
static PipelinePasses createTxToNVVMOptionPasses(const TxToNVVMOptions &options) {
  PipelinePasses passes;
  passes.push_back(
      createTxGPUTileContractions(gemmOptions(options, txToNVVMGemmDefaults())));
  passes.push_back(createTxGPUDeviceBuffers());
  return passes;
}

void tx::registerTxGPULowering() {
  registerTxGPUPasses();
  registerModulePipelineWithPasses<TxToNVVMOptions>(
      kTxToNVVMPipelineName,
      "Lower tx (or linalg on buffers) to NVVM kernels in a gpu.binary and "
      "host code calling the mgpu* runtime. Options: these, and those of "
      "tx-gpu-tile-contractions (block-tile=64,64,16 mma=off "
      "split-k-blocks=N remarks ...; its chip is the pipeline's, its "
      "split-k-blocks defaults to 256 here) and tx-gpu-device-buffers "
      "(test-upload-weights-per-call)",
      createTxToNVVMOptionPasses,
      [](OpPassManager &pm, const TxToNVVMOptions &options,
         PipelinePasses passes) {
        addTxToNVVMPasses(pm, options, std::move(passes[0]),
                          std::move(passes[1]));
      });
}
