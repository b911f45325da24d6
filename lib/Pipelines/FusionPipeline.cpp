//===- FusionPipeline.cpp - the tx-fusion pipeline ------------------------===//

#include "TxDialect/Pipelines/FusionPipeline.h"
#include "TxDialect/Pipelines/ModulePipeline.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

void tx::buildFusionPipeline(OpPassManager &pm,
                             const TxFuseStackedLinearsOptions &options) {
  pm.addPass(createTxFuseStackedLinears(options));
}

void tx::registerFusionPipeline() {
  registerModulePassPipeline(
      kTxFusionPipelineName,
      "Stacked-linear fusion: QKV, MLA, GLU, then merged-column as the "
      "fallback (options: those of tx-fuse-stacked-linears)",
      [] { return createTxFuseStackedLinears(); },
      [](OpPassManager &pm, std::unique_ptr<Pass> fuse) {
        pm.addPass(std::move(fuse));
      });
}
