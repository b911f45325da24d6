//===- CpuPipeline.cpp - the tx-to-cpu pipeline ---------------------------===//

#include "TxDialect/Conversion/CpuPipeline.h"
#include "TxDialect/Registration/ModulePipeline.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlir::tx {
#define GEN_PASS_REGISTRATION
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

/// Appends upstream passes given in textual form; they are registered by
/// every tx tool, and a typo here is a bug, so it is fatal.
static void addPasses(OpPassManager &pm, StringRef pipeline) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    llvm::report_fatal_error(llvm::Twine("tx-to-cpu: bad pipeline '") +
                             pipeline + "': " + err);
}

void tx::buildTxToCPUPipeline(OpPassManager &pm,
                              const TxToCPUOptions &options) {
  // Collectives over several ranks become runtime calls first (that lowering
  // splits fused GEMM+collective ops back into tx.linear, lowered next).
  // It lives in another library, found by name when this build has it.
  if (PassInfo::lookup("tx-lower-collectives-to-runtime"))
    addPasses(pm, "tx-lower-collectives-to-runtime");
  TxToLinalgOptions toLinalg;
  toLinalg.runtimeChecks = options.runtimeChecks;
  pm.addPass(createTxToLinalg(toLinalg));
  addPasses(pm, "canonicalize,cse");
  pm.addPass(createTxReturnContiguous());
  if (options.deallocate)
    addPasses(pm, "buffer-deallocation-pipeline,convert-bufferization-to-memref");
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
  if (options.threads > 1)
    addPasses(pm, llvm::formatv("func.func(scf-forall-to-parallel),"
                                "async-parallel-for{{num-workers={0} "
                                "min-task-size=1},"
                                "async-to-async-runtime,"
                                "async-runtime-ref-counting,"
                                "async-runtime-ref-counting-opt,"
                                "convert-async-to-llvm",
                                options.threads)
                      .str());
  pm.addPass(createTxEmitCInterface());
  // erf and tanh have no LLVM intrinsic: they become libm calls (erff,
  // tanhf), which the ExecutionEngine resolves in the host process.
  addPasses(pm,
            "func.func(convert-linalg-to-loops),"
            "func.func(lower-vector-mask),convert-vector-to-scf{full-unroll=true},convert-scf-to-cf,"
            "expand-strided-metadata,lower-affine,"
            "convert-vector-to-llvm,finalize-memref-to-llvm,"
            "convert-math-to-llvm,convert-math-to-libm,"
            "convert-arith-to-llvm,convert-cf-to-llvm,"
            "convert-func-to-llvm,convert-ub-to-llvm,"
            "reconcile-unrealized-casts");
}

void tx::registerTxCPUPasses() {
  registerTxConversionPasses();
  registerModulePipeline<TxToCPUOptions>(
      "tx-to-cpu",
      "Lower tx to the LLVM dialect for the CPU (tiled, vectorised GEMMs); "
      "run the result with tx-run or mlir::ExecutionEngine",
      buildTxToCPUPipeline);
}
