//===- Pipeline.cpp - the tx-sp pipeline and pass registration ------------===//

#include "TxDialect/Transforms/SequenceParallel.h"
#include "TxDialect/Registration/ModulePipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::tx {
#define GEN_PASS_REGISTRATION
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

void tx::buildSPPipeline(OpPassManager &pm, const SPPipelineOptions &options) {
  pm.addPass(createTxFinalizeConfig());
  pm.addPass(createTxSequenceParallel());
  pm.addPass(createTxAsyncTP());
  if (options.verify)
    pm.addPass(createTxVerifySPContract());
}

void tx::registerSPPassesAndPipelines() {
  registerSPPasses();
  registerModulePipeline<SPPipelineOptions>(
      "tx-sp",
      "Sequence parallelism: finalise the config, rewrite all_reduce -> norm, "
      "fuse GEMM+collectives when async_tp is on, verify the contract",
      buildSPPipeline);
}
