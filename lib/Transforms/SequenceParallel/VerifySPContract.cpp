//===- VerifySPContract.cpp - the contract at the end of the SP pipeline --===//
//
// What later stages rely on after sequence parallelism (torch-mlir's
// backend-contract idea): the module is one full graph, no all-reduce still
// feeds a norm where SP applied, and every norm on scattered tokens has a
// residual scattered the same way.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Transforms/SequenceParallel.h"

#include "SPUtils.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXVERIFYSPCONTRACT
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Whether the SP rewrite applied to `func` (it scatters somewhere).
bool isSequenceParallel(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        auto collective = dyn_cast<TxCollectiveOpInterface>(op);
        return collective && collective.getCollectiveKind() ==
                                 CollectiveKind::ReduceScatter
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

LogicalResult verifyFunction(func::FuncOp func) {
  WalkResult r = func.walk([&](Operation *op) {
    Value input, residual;
    if (auto n = dyn_cast<RMSNormOp>(op))
      input = n.getInput();
    else if (auto n = dyn_cast<AddRMSNormOp>(op)) {
      input = n.getInput();
      residual = n.getResidual();
    } else {
      return WalkResult::advance();
    }
    if (auto ar = input.getDefiningOp<AllReduceOp>()) {
      InFlightDiagnostic d =
          op->emitError() << "sequence-parallel contract: norm reads a "
                             "tx.all_reduce (expected reduce_scatter -> norm "
                             "-> all_gather)";
      d.attachNote(ar.getLoc()) << "all_reduce here";
      return WalkResult::interrupt();
    }
    if (residual && isTokenScattered(input) != isTokenScattered(residual)) {
      op->emitError() << "sequence-parallel contract: the norm's input is "
                      << (isTokenScattered(input) ? "" : "not ")
                      << "token-scattered but its residual is "
                      << (isTokenScattered(residual) ? "" : "not ")
                      << "(a replicated residual must be sliced at rank * "
                         "local_tokens)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

struct VerifySPContractPass
    : public tx::impl::TxVerifySPContractBase<VerifySPContractPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileConfigAttr> config = getEnabledFullGraphConfig(
        module, SPFeature::SequenceParallel, getArgument());
    if (failed(config))
      return signalPassFailure();
    if (!*config)
      return;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && isSequenceParallel(func) &&
          failed(verifyFunction(func)))
        return signalPassFailure();
  }
};

} // namespace
