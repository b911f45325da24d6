//===- SPPipeline.cpp - the tx-sp pipeline --------------------------------===//

#include "TxDialect/Pipelines/SPPipeline.h"
#include "TxDialect/Pipelines/ModulePipeline.h"
#include "TxDialect/Transforms/SequenceParallel.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

void tx::buildSPPipeline(OpPassManager &pm, const SPPipelineOptions &options) {
  pm.addPass(createTxFinalizeConfig());
  pm.addPass(createTxSequenceParallel());
  pm.addPass(createTxAsyncTP());
  if (options.verify)
    pm.addPass(createTxVerifySPContract());
}

void tx::registerSPPipeline() {
  registerModulePipeline<SPPipelineOptions>(
      kTxSPPipelineName,
      "Sequence parallelism: finalise the config, rewrite all_reduce -> norm, "
      "fuse GEMM+collectives when async_tp is on, verify the contract",
      buildSPPipeline);
}
