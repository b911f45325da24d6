//===- CpuPipeline.cpp - the tx-to-cpu pipeline ---------------------------===//

#include "TxDialect/Pipelines/CpuPipeline.h"
#include "TxDialect/Codegen/CPUCodegen.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/Pipelines/ModulePipeline.h"
#include "TxDialect/Conversion/CollectivesToRuntime.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
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
#define GEN_PASS_REGISTRATION
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

void tx::buildTxToCPUPipeline(OpPassManager &pm,
                              const TxToCPUOptions &options) {
  // Per-op timing brackets go around the tx ops before anything lowers them.
  if (options.profile)
    pm.addPass(createTxProfileOps());
  // Collectives over several ranks become runtime calls first (that lowering
  // splits fused GEMM+collective ops back into tx.linear, lowered next).
  pm.addPass(createTxLowerCollectivesToRuntime());
  TxToLinalgOptions toLinalg;
  toLinalg.runtimeChecks = options.runtimeChecks;
  toLinalg.rowAttention = true;
  pm.addPass(createTxToLinalg(toLinalg));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTxReturnContiguous());
  if (options.deallocate) {
    // Upstream's buffer-deallocation-pipeline, with the one dealloc that
    // frees a function's buffers at its end split per allocation before
    // the simplification (which would split it with an alias query per
    // pair of buffers: quadratic in the op count).
    pm.addPass(memref::createExpandReallocPass(
        memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
    pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createTxSplitDeallocs());
    pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
    pm.addPass(bufferization::createLowerDeallocationsPass());
    pm.addPass(createCSEPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createConvertBufferizationToMemRefPass());
  }
  pm.addPass(createTxCopiesToLinalg());
  if (options.vectorize) {
    TxCpuTileAndVectorizeOptions tileOptions;
    tileOptions.gemmTile = llvm::to_vector(options.gemmTile);
    tileOptions.gemmCacheTile = llvm::to_vector(options.gemmCacheTile);
    tileOptions.gemmPackedTile = llvm::to_vector(options.gemmPackedTile);
    tileOptions.gemmPackMinTokens = options.gemmPackMinTokens;
    tileOptions.gemmTokenBlock = options.gemmTokenBlock;
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
  } else {
    // One thread: the parallel loops tx-to-linalg made (attention over
    // heads) run as plain loops.
    pm.addPass(createParallelForToNestedForsPass());
  }
  pm.addPass(createTxEmitCInterface());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMaskPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // convert-scf-to-cf, the last loop of a block first (linear in the ops).
  pm.addNestedPass<func::FuncOp>(createTxLowerStructuredControlFlow());
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
  registerTxCPUCodegenPasses();
  registerModulePipeline<TxToCPUOptions>(
      "tx-to-cpu",
      "Lower tx to the LLVM dialect for the CPU (tiled, vectorised GEMMs); "
      "run the result with tx-run or mlir::ExecutionEngine",
      buildTxToCPUPipeline);
}
