//===- SPPipeline.h - the tx-sp pipeline ------------------------*- C++ -*-===//
//
// `tx-sp`: finalise the config, rewrite all_reduce -> norm into sequence
// parallelism, fuse GEMM+collectives when async TP is on, verify the SP
// contract. The rewrite passes read the (finalised) module config
// themselves, so they change nothing unless it enables them under
// full-graph compilation.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_SPPIPELINE_H
#define TXDIALECT_PIPELINES_SPPIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace tx {

/// The pipeline's name in pipeline text.
inline constexpr llvm::StringLiteral kTxSPPipelineName = "tx-sp";

/// Options of the `tx-sp` pipeline (its own: no pass has them).
struct SPPipelineOptions : public PassPipelineOptions<SPPipelineOptions> {
  PassOptions::Option<bool> verify{
      *this, "verify",
      llvm::cl::desc("run tx-verify-sp-contract at the end"),
      llvm::cl::init(true)};
};

/// Appends the tx-sp pipeline to `pm` (a module pass manager).
void buildSPPipeline(OpPassManager &pm, const SPPipelineOptions &options);

/// Registers the `tx-sp` pipeline.
void registerSPPipeline();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_SPPIPELINE_H
