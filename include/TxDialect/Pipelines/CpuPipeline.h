//===- CpuPipeline.h - tx to LLVM for the CPU -------------------*- C++ -*-===//
//
// The `tx-to-cpu` pipeline: tx -> linalg on buffers (tx-to-linalg) ->
// collectives to runtime calls -> GEMMs tiled and vectorised (transform
// dialect), other static linalg ops vectorised, the rest as loops -> LLVM
// dialect, public functions with `llvm.emit_c_interface`. Its output runs
// in-process through mlir::ExecutionEngine (TxDialect/Execution/CpuRunner.h).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_CPUPIPELINE_H
#define TXDIALECT_PIPELINES_CPUPIPELINE_H

#include "TxDialect/Codegen/CPUCodegen.h"
#include "TxDialect/Pipelines/PipelinePassOptions.h"

namespace mlir {
class OpPassManager;
namespace tx {

/// The pipeline's name in pipeline text.
inline constexpr llvm::StringLiteral kTxToCPUPipelineName = "tx-to-cpu";

/// How tx-to-cpu computes exp, tanh and erf on f32 vectors (`math=`).
enum class CpuMath {
  /// MLIR's polynomial approximations, in vector registers
  /// (tx-cpu-approximate-math).
  Polynomial,
  /// LLVM's intrinsics and libm, one call per vector lane.
  Libm,
};

/// The pipeline's own options, and `tile`: those of tx-cpu-tile-and-vectorize
/// (CPUPasses.td), which `tx-to-cpu{...}` takes too (`gemm-tile=4,4,4`).
struct TxToCPUOptions : public PipelineOptionsWithPass<TxToCPUOptions> {
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorise GEMMs and static linalg ops (off: "
                     "naive scalar loops, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Threads for the GEMMs' N cache blocks, or their "
                     "packed token blocks with fewer than 8 N blocks, and "
                     "for the rows of row-lowered ops and attention heads "
                     "(1: none; > 1: the async runtime, "
                     "libmlir_async_runtime, runs them; results are "
                     "bit-identical)"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc("Check at run time that dynamic sizes the ops require "
                     "to agree do (a failed check calls "
                     "tx_rt_check_failed, which tx-run, the C API and "
                     "Python provide; false: no checks, for other hosts)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> rowLoops{
      *this, "row-loops",
      llvm::cl::desc("Lower elementwise ops, norms and rotary with a static "
                     "last dimension as parallel rows of vectors "
                     "(tx-to-linalg{row-loops}; false: linalg ops over whole "
                     "buffers, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every tx op's lowered code (tx-profile-ops; "
                     "tx-run --profile prints the table)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("Compile identical layers once: after tx-to-linalg, "
                     "repeated segments proved identical become calls of "
                     "one function taking the weights as arguments "
                     "(tx-outline-identical-layers; not with profile, whose "
                     "table names each layer's ops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> testUnsafeMultiDimParallel{
      *this, "test-unsafe-multi-dim-parallel",
      llvm::cl::desc("Testing only, UNSAFE: with threads > 1, leave "
                     "multi-dimensional parallel loops to async-parallel-for "
                     "(no tx-cpu-collapse-parallel-loops), which runs some of "
                     "their iterations twice"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Insert deallocations of temporaries "
                     "(ownership-based buffer deallocation)"),
      llvm::cl::init(true)};
  PassOptions::Option<CpuMath> math{
      *this, "math",
      llvm::cl::desc("exp, tanh and erf on f32 vectors (silu, gelu, "
                     "gelu_tanh, exp rows): polynomial (default; MLIR's "
                     "approximations in vector registers, measured: exp "
                     "within 5 ulp, silu 4, gelu and gelu_tanh 2 ulp of "
                     "max(|result|, |x|); results below 2^-126 flush to "
                     "zero; 7-10x faster silu) or libm (LLVM's intrinsics "
                     "and libm, one call per vector lane: exp within 0.51 "
                     "ulp)"),
      llvm::cl::init(CpuMath::Polynomial),
      llvm::cl::values(
          clEnumValN(CpuMath::Polynomial, "polynomial",
                     "MLIR's polynomial approximations"),
          clEnumValN(CpuMath::Libm, "libm", "libm, one call per lane"))};

  /// The options of tx-cpu-tile-and-vectorize, used when `vectorize` is
  /// set; its `parallelBlocks` is set from `threads`.
  TxCpuTileAndVectorizeOptions tile;
};

/// Appends the tx-to-cpu pipeline to `pm` (a module pass manager).
void buildTxToCPUPipeline(OpPassManager &pm, const TxToCPUOptions &options);

/// Registers tx-to-linalg, the CPU helper passes and the `tx-to-cpu`
/// pipeline.
void registerTxCPUPasses();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_CPUPIPELINE_H
