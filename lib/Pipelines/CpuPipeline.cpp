//===- CpuPipeline.cpp - the tx-to-cpu pipeline ---------------------------===//

#include "TxDialect/Pipelines/CpuPipeline.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/Registration/ModulePipeline.h"
#include "TxDialect/Conversion/CollectivesToRuntime.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlir::tx {
#define GEN_PASS_REGISTRATION
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

void tx::buildTxToCPUPipeline(OpPassManager &pm,
                              const TxToCPUOptions &options) {
  // Collectives over several ranks become runtime calls first (that lowering
  // splits fused GEMM+collective ops back into tx.linear, lowered next).
  pm.addPass(createTxLowerCollectivesToRuntime());
  TxToLinalgOptions toLinalg;
  toLinalg.runtimeChecks = options.runtimeChecks;
  pm.addPass(createTxToLinalg(toLinalg));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTxReturnContiguous());
  if (options.deallocate) {
    bufferization::buildBufferDeallocationPipeline(
        pm, bufferization::BufferDeallocationPipelineOptions());
    pm.addPass(createConvertBufferizationToMemRefPass());
  }
  pm.addPass(createTxCopiesToLinalg());
  if (options.vectorize) {
    TxCpuTileAndVectorizeOptions tileOptions;
    tileOptions.gemmTile = llvm::to_vector(options.gemmTile);
    tileOptions.gemmCacheTile = llvm::to_vector(options.gemmCacheTile);
    tileOptions.gemmPackedTile = llvm::to_vector(options.gemmPackedTile);
    tileOptions.gemmPackMinTokens = options.gemmPackMinTokens;
    tileOptions.parallelBlocks = options.threads > 1;
    tileOptions.testUnsafeHoist = options.testUnsafeHoist;
    pm.addPass(createTxCpuTileAndVectorize(tileOptions));
  }
  if (options.threads > 1) {
    // The scf.forall over a GEMM's N cache blocks runs on the async
    // runtime, one task per block.
    pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
    AsyncParallelForPassOptions parallelFor;
    parallelFor.numWorkerThreads = options.threads;
    parallelFor.minTaskSize = 1;
    pm.addPass(createAsyncParallelForPass(parallelFor));
    pm.addPass(createAsyncToAsyncRuntimePass());
    pm.addPass(createAsyncRuntimeRefCountingPass());
    pm.addPass(createAsyncRuntimeRefCountingOptPass());
    pm.addPass(createConvertAsyncToLLVMPass());
  }
  pm.addPass(createTxEmitCInterface());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMaskPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // erf and tanh have no LLVM intrinsic: they become libm calls (erff,
  // tanhf), which the ExecutionEngine resolves in the host process.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void tx::registerTxCPUPasses() {
  registerTxConversionPasses();
  registerModulePipeline<TxToCPUOptions>(
      "tx-to-cpu",
      "Lower tx to the LLVM dialect for the CPU (tiled, vectorised GEMMs); "
      "run the result with tx-run or mlir::ExecutionEngine",
      buildTxToCPUPipeline);
}
