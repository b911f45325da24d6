//===- GPUPipeline.cpp - the tx-to-nvvm pipeline --------------------------===//

#include "TxDialect/Conversion/GPUPipeline.h"
#include "TxDialect/Registration/ModulePipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tx {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

/// Adds the tx pass or pipeline `name` when this build registers it. The
/// conversion of tx ops to linalg and the C-interface marking belong to the
/// CPU lowering; looking them up by name lets the GPU lowering build, and
/// work on linalg input, without them.
static void addIfRegistered(OpPassManager &pm, StringRef name) {
  auto onError = [&](const Twine &msg) {
    llvm::errs() << "tx-to-nvvm: " << name << ": " << msg << "\n";
    return failure();
  };
  if (const PassPipelineInfo *pipeline = PassPipelineInfo::lookup(name))
    (void)pipeline->addToPipeline(pm, "", onError);
  else if (const PassInfo *pass = PassInfo::lookup(name))
    (void)pass->addToPipeline(pm, "", onError);
}

static void addUpstream(OpPassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::errs() << "tx-to-nvvm: internal error: cannot parse '" << pipeline
                 << "'\n";
}

void tx::buildTxToNVVMPipeline(OpPassManager &pm,
                               const TxToNVVMOptions &options) {
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
  pm.addPass(createTxGPUCheckTarget(target));

  addIfRegistered(pm, "tx-to-linalg");
  // Intermediate buffers are freed after their last use, as on the CPU
  // (kernels run synchronously in the host code, so the last use on the
  // host is the last use); tx-gpu-host-register unregisters each before
  // its dealloc. Returned buffers are made contiguous first.
  if (options.deallocate) {
    addIfRegistered(pm, "tx-return-contiguous");
    addUpstream(pm, "canonicalize,cse,buffer-deallocation-pipeline,"
                    "convert-bufferization-to-memref");
  }
  // Public functions get the _mlir_ciface_ wrappers tx-run calls.
  addIfRegistered(pm, "tx-emit-c-interface");
  addUpstream(pm, "canonicalize");

  // GEMMs first: they get the shared-memory tiled kernel; everything else
  // (norms, elementwise, fills, copies) takes the parallel-loop path below.
  TxGPUTileContractionsOptions gemm;
  gemm.blockTile.assign(options.gemmBlockTile.begin(),
                        options.gemmBlockTile.end());
  gemm.threadTile.assign(options.gemmThreadTile.begin(),
                         options.gemmThreadTile.end());
  gemm.chip = options.chip;
  gemm.mma = options.gemmMma;
  gemm.splitKBlocks = options.gemmSplitKBlocks;
  gemm.remarks = options.gemmRemarks;
  gemm.mmaBlockTile.assign(options.gemmMmaBlockTile.begin(),
                           options.gemmMmaBlockTile.end());
  gemm.mmaWarpTile.assign(options.gemmMmaWarpTile.begin(),
                          options.gemmMmaWarpTile.end());
  pm.addPass(createTxGPUTileContractions(gemm));

  // Reductions stay sequential loops inside the parallel dimensions; the
  // tiling without min/max bounds keeps the block size static (a dynamic
  // token count would otherwise stop convert-parallel-loops-to-gpu).
  SmallVector<std::string> tileSizes;
  for (int64_t size : options.loopTileSizes)
    tileSizes.push_back(std::to_string(size));
  std::string loopTiles =
      tileSizes.empty() ? "16,16" : llvm::join(tileSizes, ",");
  addUpstream(pm, "convert-linalg-to-parallel-loops,"
                  "scf-parallel-loop-tiling{parallel-loop-tile-sizes=" +
                      loopTiles +
                      " no-min-max-bounds=true},"
                      "func.func(gpu-map-parallel-loops),"
                      "convert-parallel-loops-to-gpu");
  pm.addPass(createTxGPUHostRegister());
  addUpstream(pm, "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
                  "lower-affine,canonicalize");
  // ldmatrix reads 16-byte rows of the shared tiles.
  pm.addNestedPass<gpu::GPUModuleOp>(createTxGPUAlignWorkgroupBuffers());

  // gpu-lower-to-nvvm-pipeline, spelled out so that the toolkit is explicit:
  // libdevice linked into every kernel module (math functions) and ptxas
  // found without CUDA_HOME.
  std::string attach = "triple=nvptx64-nvidia-cuda chip=" +
                       std::string(options.chip) + " features=" + features +
                       " O=" + std::to_string(options.optLevel);
  if (!libdevice.empty())
    attach += " l=" + libdevice;
  // Without libdevice, kernel math is approximated before the module-level
  // conversions lower the arith it expands into.
  std::string approximateMath =
      approximate ? "gpu.module(tx-gpu-approximate-math)," : "";
  addUpstream(pm, "convert-nvgpu-to-nvvm,gpu-kernel-outlining," +
                  approximateMath +
                  "convert-vector-to-scf,convert-scf-to-cf,"
                  "convert-nvvm-to-llvm,convert-func-to-llvm,"
                  "expand-strided-metadata,"
                  "nvvm-attach-target{" +
                      attach +
                      "},"
                      "lower-affine,convert-arith-to-llvm,"
                      "convert-index-to-llvm{index-bitwidth=64},"
                      "canonicalize,cse,"
                      "gpu.module(strip-debuginfo,"
                      "convert-gpu-to-nvvm{index-bitwidth=64},"
                      "llvm-optimize-for-nvvm-target,canonicalize,cse,"
                      "reconcile-unrealized-casts)");
  TxGPUCheckLibdeviceOptions libdeviceCheck;
  libdeviceCheck.libdevice = libdevice;
  pm.addPass(createTxGPUCheckLibdevice(libdeviceCheck));
  std::string toBinary = "format=" + std::string(options.format);
  if (!toolkit.empty())
    toBinary += " toolkit=" + toolkit;
  addUpstream(pm, "gpu-to-llvm,gpu-module-to-binary{" + toBinary +
                      "},convert-math-to-llvm,canonicalize,cse,"
                      "reconcile-unrealized-casts");
}

void tx::registerTxGPULowering() {
  registerTxGPUPasses();
  registerModulePipeline<TxToNVVMOptions>(
      "tx-to-nvvm",
      "Lower tx (or linalg on buffers) to NVVM kernels in a gpu.binary and "
      "host code calling the mgpu* runtime",
      buildTxToNVVMPipeline);
}
