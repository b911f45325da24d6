//===- LowerStructuredControlFlow.cpp - scf to cf in linear time ----------===//
//
// tx-lower-structured-control-flow: upstream's SCF-to-ControlFlow patterns,
// applied from the end of each block to its start. Lowering a loop splits
// its block after it; the dialect conversion visits loops first to last, so
// that every split moved all the ops after the loop (time quadratic in the
// loops of a function). Visited last to first (the outermost scf ops of
// the function handed to the conversion in reverse order), a split moves
// only the ops up to the next, already lowered, loop.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXLOWERSTRUCTUREDCONTROLFLOW
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct TxLowerStructuredControlFlowPass
    : tx::impl::TxLowerStructuredControlFlowBase<
          TxLowerStructuredControlFlowPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSCFToControlFlowConversionPatterns(patterns);
    // The outermost scf ops of the function, last first: the conversion
    // visits them in that order, each before the ops nested in it.
    SmallVector<Operation *> roots;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa_and_nonnull<scf::SCFDialect>(op->getDialect()))
        return WalkResult::advance();
      roots.push_back(op);
      return WalkResult::skip();
    });
    std::reverse(roots.begin(), roots.end());
    // As convert-scf-to-cf does, without rollback bookkeeping.
    ConversionTarget target(getContext());
    target.addIllegalDialect<scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    ConversionConfig config;
    config.allowPatternRollback = false;
    // An scf op the patterns do not lower fails the conversion with an
    // error at that op.
    if (failed(applyPartialConversion(roots, target, std::move(patterns),
                                      config)))
      signalPassFailure();
  }
};

} // namespace
