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
using namespace mlir::tx;

namespace mlir::tx {
#define GEN_PASS_REGISTRATION
#include "TxDialect/Conversion/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

/// tx-cpu-tile-and-vectorize's options as tx-to-cpu runs it: its N cache
/// blocks (or, for GEMMs with few of them, its packed token blocks) are an
/// scf.forall, lowered to async tasks, when threads > 1.
static TxCpuTileAndVectorizeOptions
tileOptions(const TxToCPUOptions &options, TxCpuTileAndVectorizeOptions tile) {
  tile.parallelBlocks = options.threads > 1;
  return tile;
}

/// The pipeline, with `tile` the tx-cpu-tile-and-vectorize pass it runs when
/// options.vectorize is set.
static void addTxToCPUPasses(OpPassManager &pm, const TxToCPUOptions &options,
                             std::unique_ptr<Pass> tile) {
  // Per-op timing brackets go around the tx ops before anything lowers them.
  if (options.profile)
    pm.addPass(createTxProfileOps());
  // Collectives over several ranks become runtime calls first (that lowering
  // splits fused GEMM+collective ops back into tx.linear, lowered next).
  pm.addPass(createTxLowerCollectivesToRuntime());
  TxToLinalgOptions toLinalg;
  toLinalg.runtimeChecks = options.runtimeChecks;
  toLinalg.rowAttention = true;
  toLinalg.rowLoops = options.rowLoops;
  pm.addPass(createTxToLinalg(toLinalg));
  // Weights are get_global values now, which can become arguments. The
  // profile's brackets must stay per layer, so it keeps every layer inline.
  if (options.outlineLayers && !options.profile)
    pm.addPass(createTxOutlineIdenticalLayers());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Returned views are copied out as rows (in parallel with threads).
  TxReturnContiguousOptions contiguous;
  contiguous.rows = options.rowLoops;
  pm.addPass(createTxReturnContiguous(contiguous));
  if (options.deallocate) {
    // Blocks become scf ops first: upstream's ownership-based deallocation
    // crashes on some functions of several blocks (an scf.if result used
    // after a cf.br) and handles loops only as loop ops.
    pm.addPass(createLiftControlFlowToSCFPass());
    // Upstream's buffer-deallocation-pipeline, with the one dealloc that
    // frees a function's buffers at its end split per allocation before
    // the simplification (which would split it with an alias query per
    // pair of buffers: quadratic in the op count).
    pm.addPass(memref::createExpandReallocPass(
        memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createTxSplitDeallocs());
    pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
    pm.addPass(bufferization::createLowerDeallocationsPass());
    pm.addPass(createCSEPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createConvertBufferizationToMemRefPass());
  }
  pm.addPass(createTxCopiesToLinalg());
  if (options.vectorize)
    pm.addPass(std::move(tile));
  // The scf.forall over a GEMM's N cache blocks or token blocks
  // (tile.parallelBlocks, set when threads > 1) is a parallel loop like
  // those tx-to-linalg made.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (options.threads > 1) {
    // Parallel loops run on the async runtime, one task per block; each
    // over one dimension (async-parallel-for runs some iterations of a
    // multi-dimensional one twice).
    if (!options.testUnsafeMultiDimParallel)
      pm.addNestedPass<func::FuncOp>(createTxCpuCollapseParallelLoops());
    AsyncParallelForPassOptions parallelFor;
    parallelFor.numWorkerThreads = options.threads;
    parallelFor.minTaskSize = 1;
    pm.addPass(createAsyncParallelForPass(parallelFor));
    pm.addPass(createAsyncToAsyncRuntimePass());
    pm.addPass(createAsyncRuntimeRefCountingPass());
    pm.addPass(createAsyncRuntimeRefCountingOptPass());
    pm.addPass(createConvertAsyncToLLVMPass());
  } else {
    // One thread: the parallel loops (attention over heads, and cache
    // blocks when parallel-blocks is given explicitly) run as plain loops.
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
  // exp, tanh and erf on f32 vectors: polynomials in vector registers.
  if (options.math == CpuMath::Polynomial)
    pm.addPass(createTxCpuApproximateMath());
  // Otherwise (math=libm, scalars) exp and tanh are LLVM intrinsics, which
  // LLVM scalarises into libm calls per lane; erf has none: it becomes a
  // libm call (erff), which the ExecutionEngine resolves in the host
  // process. Before the vector lowering: on vectors (rows, vectorised static
  // ops) the calls are per lane, through vector.extract/insert.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 vectors of 8k+1 lanes crash LLVM's X86 back end: moved in two.
  pm.addNestedPass<func::FuncOp>(createTxCpuSplitOddBf16Vectors());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void tx::buildTxToCPUPipeline(OpPassManager &pm,
                              const TxToCPUOptions &options) {
  addTxToCPUPasses(
      pm, options,
      createTxCpuTileAndVectorize(tileOptions(options, options.tile)));
}

/// tx-to-cpu{...}'s pass with options of its own: the entries that are not
/// the pipeline's are tx-cpu-tile-and-vectorize's, parsed by that pass over
/// the values tx-to-cpu gives it.
static PipelinePasses createTxToCPUOptionPasses(const TxToCPUOptions &options) {
  PipelinePasses passes;
  passes.push_back(createTxCpuTileAndVectorize(
      tileOptions(options, TxCpuTileAndVectorizeOptions())));
  return passes;
}

void tx::registerTxCPUPasses() {
  registerTxConversionPasses();
  registerTxCPUCodegenPasses();
  registerModulePipelineWithPasses<TxToCPUOptions>(
      kTxToCPUPipelineName,
      "Lower tx to the LLVM dialect for the CPU (tiled, vectorised GEMMs); "
      "run the result with tx-run or mlir::ExecutionEngine. Options: these, "
      "and those of tx-cpu-tile-and-vectorize (gemm-tile=8,8,8 ...)",
      createTxToCPUOptionPasses,
      [](OpPassManager &pm, const TxToCPUOptions &options,
         PipelinePasses passes) {
        addTxToCPUPasses(pm, options, std::move(passes.front()));
      });
}
