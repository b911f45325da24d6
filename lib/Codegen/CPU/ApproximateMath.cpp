//===- ApproximateMath.cpp - vectorised exp, tanh and erf for the CPU -----===//
//
// tx-cpu-approximate-math: math.exp, math.tanh and math.erf on vectors of
// f32 become MLIR's polynomial approximations (upstream
// populateMathPolynomialApproximationPatterns), which stay in vector
// registers. Without it, convert-math-to-llvm makes them llvm.intr.exp (which
// LLVM scalarises into one expf call per lane) or, for tanh and erf, one
// libm call per lane through vector.extract/insert. Scalars keep the libm
// path: a scalar call costs no more than its approximation.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUAPPROXIMATEMATH
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// Whether `op` is a math function this pass approximates: exp, tanh or erf
/// with a result of vector<...xf32>.
bool isApproximated(Operation *op) {
  if (!isa<math::ExpOp, math::TanhOp, math::ErfOp>(op))
    return false;
  auto type = dyn_cast<VectorType>(op->getResult(0).getType());
  return type && type.getElementType().isF32();
}

struct TxCpuApproximateMathPass
    : tx::impl::TxCpuApproximateMathBase<TxCpuApproximateMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isApproximated(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return name == math::ExpOp::getOperationName() ||
                 name == math::TanhOp::getOperationName() ||
                 name == math::ErfOp::getOperationName();
        });
    // Only the ops collected above: the scalar ones keep libm, and the ops
    // the approximations are made of (fma, floor, ...) lower natively.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
