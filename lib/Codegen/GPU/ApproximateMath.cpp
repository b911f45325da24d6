//===- ApproximateMath.cpp - kernel math without libdevice ----------------===//
//
// The `math=polynomial` lowering of tx-to-nvvm: every math function inside a
// gpu.module becomes either MLIR's polynomial approximation or an LLVM
// intrinsic the NVPTX back end implements, so that the PTX needs nothing
// from the CUDA Toolkit.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/GPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUAPPROXIMATEMATH
#define GEN_PASS_DEF_TXGPUAPPROXIMATEMATH
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// The LLVM intrinsic that LLVM's NVPTX back end selects to one PTX
/// instruction (sqrt.rn, fma.rn, abs, cvt.rmi/rpi/rni/rzi, copysign) for a
/// math op; empty when there is none. rsqrt is 1/sqrt, correctly rounded
/// unlike rsqrt.approx.
StringRef nativeIntrinsic(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](math::SqrtOp) { return "llvm.sqrt"; })
      .Case([](math::RsqrtOp) { return "llvm.sqrt"; })
      .Case([](math::FmaOp) { return "llvm.fma"; })
      .Case([](math::AbsFOp) { return "llvm.fabs"; })
      .Case([](math::FloorOp) { return "llvm.floor"; })
      .Case([](math::CeilOp) { return "llvm.ceil"; })
      .Case([](math::RoundEvenOp) { return "llvm.roundeven"; })
      .Case([](math::RoundOp) { return "llvm.round"; })
      .Case([](math::TruncOp) { return "llvm.trunc"; })
      .Case([](math::CopySignOp) { return "llvm.copysign"; })
      .Default([](Operation *) { return StringRef(); });
}

/// Replaces `op` by a call of its native intrinsic. The call is
/// `llvm.call_intrinsic` rather than the LLVM dialect's named intrinsic ops
/// because convert-gpu-to-nvvm marks those illegal, to send them to libdevice.
void lowerToIntrinsic(RewriterBase &rewriter, Operation *op,
                      StringRef intrinsic) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Type type = op->getResult(0).getType();
  Value result = LLVM::CallIntrinsicOp::create(
                     rewriter, loc, type, rewriter.getStringAttr(intrinsic),
                     op->getOperands())
                     .getResult(0);
  if (isa<math::RsqrtOp>(op)) {
    Value one = arith::ConstantOp::create(rewriter, loc, type,
                                          rewriter.getOneAttr(type));
    result = arith::DivFOp::create(rewriter, loc, one, result);
  }
  rewriter.replaceOp(op, result);
}

struct TxGPUApproximateMathPass
    : public tx::impl::TxGPUApproximateMathBase<TxGPUApproximateMathPass> {
  void runOnOperation() override {
    Operation *module = getOperation();
    MLIRContext *ctx = &getContext();

    // Functions without an approximation of their own, rewritten in terms of
    // ones that have one (sinh -> exp, powf -> exp/log, ...).
    RewritePatternSet patterns(ctx);
    static const StringRef expanded[] = {"sinh",  "cosh", "asinh", "acosh",
                                         "atanh", "powf", "fpowi", "exp2"};
    math::populateExpansionPatterns(patterns, expanded);
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    // What remains with a native PTX instruction becomes the intrinsic.
    IRRewriter rewriter(ctx);
    module->walk([&](Operation *op) {
      if (!isa<math::MathDialect>(op->getDialect()) ||
          op->getNumResults() != 1)
        return;
      Type element = getElementTypeOrSelf(op->getResult(0).getType());
      StringRef intrinsic = nativeIntrinsic(op);
      if (!intrinsic.empty() && (element.isF32() || element.isF64()))
        lowerToIntrinsic(rewriter, op, intrinsic);
    });

    WalkResult result = module->walk([&](Operation *op) {
      if (!isa<math::MathDialect>(op->getDialect()))
        return WalkResult::advance();
      Type type = op->getNumResults() ? op->getResult(0).getType() : Type();
      op->emitError() << "tx-to-nvvm: '" << op->getName()
                      << "' on " << type
                      << " has no polynomial approximation nor a native PTX "
                         "instruction; use math=libdevice with a CUDA Toolkit";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
