//===- InitAllTx.cpp - registration shared by every tx tool ---------------===//

#include "TxDialect/InitAllTx.h"
#include "TxDialect/Conversion/CollectivesToRuntime.h"
#include "TxDialect/Pipelines/CpuPipeline.h"
#include "TxDialect/Pipelines/FusionPipeline.h"
#include "TxDialect/Pipelines/GPUPipeline.h"
#include "TxDialect/Pipelines/SPPipeline.h"
#include "TxDialect/Transforms/FusionPasses.h"
#include "TxDialect/Transforms/SequenceParallel.h"
#include "TxDialect/TxDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;

void tx::registerTxDialect(DialectRegistry &registry) {
  registry.insert<tx::TxDialect>();
}

void tx::registerAllTxDialects(DialectRegistry &registry) {
  registerTxDialect(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the pass.
  registerAllGPUToLLVMIRTranslations(registry);
}

void tx::registerTxPasses() {
  registerTxCPUPasses();
  registerTxGPULowering();
  registerSPPasses();
  registerSPPipeline();
  registerCollectivesToRuntimePasses();
  registerTxFusionPasses();
  registerFusionPipeline();
}

void tx::registerAllTxPasses() {
  registerAllPasses();
  registerTxPasses();
}
