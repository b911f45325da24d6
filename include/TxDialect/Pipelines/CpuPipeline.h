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

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tx {

struct TxToCPUOptions : public PassPipelineOptions<TxToCPUOptions> {
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorise GEMMs and static linalg ops (off: "
                     "naive scalar loops, for comparison)"),
      llvm::cl::init(true)};
  PassOptions::ListOption<int64_t> gemmTile{
      *this, "gemm-tile",
      llvm::cl::desc("GEMM register tile sizes M,N,K (default 8,8,8)")};
  PassOptions::ListOption<int64_t> gemmCacheTile{
      *this, "gemm-cache-tile",
      llvm::cl::desc("GEMM cache block of the weight N,K (default 256,256; "
                     "0: that dimension is not blocked)")};
  PassOptions::ListOption<int64_t> gemmPackedTile{
      *this, "gemm-packed-tile",
      llvm::cl::desc("Register tile sizes M,N,K of packed GEMMs (default "
                     "8,32,8)")};
  PassOptions::Option<int64_t> gemmPackMinTokens{
      *this, "gemm-pack-min-tokens",
      llvm::cl::desc("Pack GEMM operands (weight block transposed, token "
                     "rows copied) when a call has at least this many tokens "
                     "(0: never)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> gemmTokenBlock{
      *this, "gemm-token-block",
      llvm::cl::desc("Token rows per block of a packed GEMM: the weight "
                     "block is packed once, the token rows per block of "
                     "this many (0: all rows in one block)"),
      llvm::cl::init(128)};
  PassOptions::Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Threads for the GEMMs' N cache blocks (1: none; > 1: "
                     "the async runtime, libmlir_async_runtime, runs them; "
                     "results are bit-identical)"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc("Check at run time that dynamic sizes the ops require "
                     "to agree do (a failed check calls "
                     "tx_rt_check_failed, which tx-run, the C API and "
                     "Python provide; false: no checks, for other hosts)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> testUnsafeHoist{
      *this, "test-unsafe-hoist",
      llvm::cl::desc("Testing only, UNSAFE: the accumulator hoisting ignores "
                     "the own effects of ops with regions"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every tx op's lowered code (tx-profile-ops; "
                     "tx-run --profile prints the table)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Insert deallocations of temporaries "
                     "(ownership-based buffer deallocation)"),
      llvm::cl::init(true)};
};

/// Appends the tx-to-cpu pipeline to `pm` (a module pass manager).
void buildTxToCPUPipeline(OpPassManager &pm, const TxToCPUOptions &options);

/// Registers tx-to-linalg, the CPU helper passes and the `tx-to-cpu`
/// pipeline.
void registerTxCPUPasses();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_CPUPIPELINE_H
