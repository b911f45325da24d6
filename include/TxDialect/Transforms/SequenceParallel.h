//===- SequenceParallel.h - sequence-parallelism passes ---------*- C++ -*-===//
//
// Config finalisation, the SP and async-TP rewrites, the SP contract check
// and the `tx-sp` pipeline. (The collectives lowering is a conversion:
// TxDialect/Conversion/CollectivesToRuntime.h.)
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H
#define TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class ModuleOp;
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Transforms/SPPasses.h.inc"

/// Options of the `tx-sp` pipeline.
struct SPPipelineOptions : public PassPipelineOptions<SPPipelineOptions> {
  PassOptions::Option<bool> verify{
      *this, "verify",
      llvm::cl::desc("run tx-verify-sp-contract at the end"),
      llvm::cl::init(true)};
};

/// finalize-config, sequence-parallel, async-tp, verify-sp-contract. The
/// rewrite passes read the (finalised) module config themselves, so async TP
/// is a no-op unless the config enables it.
void buildSPPipeline(OpPassManager &pm, const SPPipelineOptions &options);

/// Registers every pass above and the `tx-sp` pipeline.
void registerSPPassesAndPipelines();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H
