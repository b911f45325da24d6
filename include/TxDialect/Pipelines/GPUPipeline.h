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

#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <string>

namespace mlir {
class OpPassManager;
class Pass;
namespace tx {

/// The pipeline's name in pipeline text.
inline constexpr llvm::StringLiteral kTxToNVVMPipelineName = "tx-to-nvvm";

struct TxToNVVMOptions : public PassPipelineOptions<TxToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip (sm_80, sm_90, sm_90a, ...)"),
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
  PassOptions::ListOption<int64_t> gemmBlockTile{
      *this, "gemm-block-tile",
      llvm::cl::desc("GEMM block tile BM,BN,BK (default 64,64,16)")};
  PassOptions::ListOption<int64_t> gemmThreadTile{
      *this, "gemm-thread-tile",
      llvm::cl::desc("GEMM per-thread register tile RM,RN (default 4,4)")};
  PassOptions::Option<std::string> gemmMma{
      *this, "gemm-mma",
      llvm::cl::desc("Tensor cores for GEMMs (sm_80 and newer): auto "
                     "(f16/bf16 operands with an f32 accumulator), tf32 "
                     "(also f32 GEMMs, operands rounded to TF32), off"),
      llvm::cl::init("auto")};
  PassOptions::ListOption<int64_t> gemmMmaBlockTile{
      *this, "gemm-mma-block-tile",
      llvm::cl::desc("Tensor-core GEMM block tile BM,BN,BK (default 64,64,32)")};
  PassOptions::ListOption<int64_t> gemmMmaWarpTile{
      *this, "gemm-mma-warp-tile",
      llvm::cl::desc("Tensor-core GEMM per-warp tile WM,WN (default 32,32)")};
  PassOptions::Option<int64_t> gemmSplitKBlocks{
      *this, "gemm-split-k-blocks",
      llvm::cl::desc("Split-K for GEMMs whose output tiles give fewer "
                     "blocks than this (decode shapes): K spread over more "
                     "blocks, partial sums added with f32 atomics; 0: off"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> gemmRemarks{
      *this, "gemm-remarks",
      llvm::cl::desc("A remark at every GEMM: the kernel it got (tensor-core "
                     "instruction or SIMT, tiles, split-K) and why not "
                     "tensor cores"),
      llvm::cl::init(false)};
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
  PassOptions::Option<bool> testUploadWeightsPerCall{
      *this, "test-upload-weights-per-call",
      llvm::cl::desc("Testing only, SLOW: memory=device uploads the weights "
                     "at every call (the counters must show it)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> testBreakGemm{
      *this, "test-break-gemm",
      llvm::cl::desc("Testing only, WRONG KERNELS: tx-gpu-tile-contractions' "
                     "test-break (drop-barrier, fragment-offset)"),
      llvm::cl::init("")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("NVVM optimization level"),
      llvm::cl::init(3)};
};

/// Appends the tx-to-nvvm pipeline to `pm` (a module pass manager).
void buildTxToNVVMPipeline(OpPassManager &pm, const TxToNVVMOptions &options);

/// Registers the GPU lowering passes and the `tx-to-nvvm` pipeline.
void registerTxGPULowering();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_GPUPIPELINE_H
