//===- GPUPipeline.h - tx to NVVM kernels and host code ---------*- C++ -*-===//
//
// The `tx-to-nvvm` pipeline: tx -> linalg on buffers -> GEMMs as shared-memory
// tiled kernels, other linalg ops as parallel loops mapped to blocks/threads
// -> outlined gpu.module -> NVVM -> gpu.binary (PTX, cubin or fatbin), host
// code through gpu-to-llvm calling the mgpu* runtime (runtime/cuda).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_GPUPIPELINE_H
#define TXDIALECT_PIPELINES_GPUPIPELINE_H

#include "TxDialect/Codegen/GPUCodegen.h"
#include "TxDialect/Pipelines/PipelinePassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace tx {

/// The pipeline's name in pipeline text.
inline constexpr llvm::StringLiteral kTxToNVVMPipelineName = "tx-to-nvvm";

/// The split-k-blocks tx-to-nvvm gives tx-gpu-tile-contractions unless told
/// otherwise (the pass alone defaults to 0, off): decode GEMMs with few
/// output tiles spread their K over more blocks.
inline constexpr int64_t kTxToNVVMSplitKBlocks = 256;

/// tx-gpu-tile-contractions' options as tx-to-nvvm starts from them.
inline TxGPUTileContractionsOptions txToNVVMGemmDefaults() {
  TxGPUTileContractionsOptions gemm;
  gemm.splitKBlocks = kTxToNVVMSplitKBlocks;
  return gemm;
}

/// The pipeline's own options, and `gemm` and `deviceBuffers`: those of
/// tx-gpu-tile-contractions and tx-gpu-device-buffers (GPUPasses.td), which
/// `tx-to-nvvm{...}` takes too under the passes' own names
/// (`tx-to-nvvm{chip=sm_80 mma=off split-k-blocks=0}`).
struct TxToNVVMOptions : public PipelineOptionsWithPass<TxToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip (sm_80, sm_90, sm_90a, ...), also given "
                     "to tx-gpu-tile-contractions"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX feature `+ptxNN` (empty: the lowest the chip needs)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu.binary format: isa (PTX), bin (cubin, needs ptxas), "
                     "fatbin (needs ptxas and fatbinary), llvm (the kernels' NVVM "
                     "LLVM IR as bitcode, run by the emulated device)"),
      llvm::cl::init("isa")};
  PassOptions::ListOption<int64_t> loopTileSizes{
      *this, "loop-tile-sizes",
      llvm::cl::desc("Threads per block along each dimension of the "
                     "non-GEMM parallel loops (default 16,16)")};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("CUDA Toolkit directory (ptxas, fatbinary, libdevice); "
                     "default: CUDA_ROOT/CUDA_HOME/CUDA_PATH, the ptxas on "
                     "PATH, /usr/local/cuda; `none`: use none)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> math{
      *this, "math",
      llvm::cl::desc("Math functions in kernels: libdevice (the toolkit's, "
                     "linked in), polynomial (MLIR's approximations and "
                     "native PTX instructions, no toolkit needed), auto "
                     "(libdevice when found, else polynomial)"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Free intermediate host buffers after their last use "
                     "(MLIR's buffer deallocation pipeline; off for modules "
                     "that manage their own memory with gpu.alloc/gpu.wait, "
                     "whose effects that pipeline does not model)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> memory{
      *this, "memory",
      llvm::cl::desc("Where kernels find their buffers: device (weights "
                     "uploaded once and kept in device memory, activations "
                     "gpu.alloc'd, arguments and results copied, one stream "
                     "per call, CUDA graphs with cudagraph_mode = full) or "
                     "host-mapped (every host buffer registered and read by "
                     "the kernels over the bus: for host code that touches "
                     "buffers between kernels, and for callers that pass "
                     "device or managed memory themselves)"),
      llvm::cl::init("device")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("NVVM optimization level"),
      llvm::cl::init(3)};

  /// The options of tx-gpu-tile-contractions; its `chip` is set from the
  /// pipeline's, its split-k-blocks starts at kTxToNVVMSplitKBlocks.
  TxGPUTileContractionsOptions gemm = txToNVVMGemmDefaults();
  /// The options of tx-gpu-device-buffers (memory=device).
  TxGPUDeviceBuffersOptions deviceBuffers;
};

/// Appends the tx-to-nvvm pipeline to `pm` (a module pass manager).
void buildTxToNVVMPipeline(OpPassManager &pm, const TxToNVVMOptions &options);

/// Registers the GPU lowering passes and the `tx-to-nvvm` pipeline.
void registerTxGPULowering();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_GPUPIPELINE_H
