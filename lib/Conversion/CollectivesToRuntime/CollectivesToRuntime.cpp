//===- CollectivesToRuntime.cpp - tx collectives to tx_rt_* calls ---------===//

#include "TxDialect/Conversion/CollectivesToRuntime.h"

#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXLOWERCOLLECTIVESTORUNTIME
#include "TxDialect/Conversion/CollectivesPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "TxDialect/Conversion/CollectivesPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// The runtime's name for an element type, or "" when it has none.
StringRef typeSuffix(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF64())
    return "f64";
  return "";
}

/// Declares `name` in the module of `op` unless it exists.
func::FuncOp getOrDeclare(PatternRewriter &rewriter, Operation *op,
                          StringRef name, FunctionType type,
                          bool cInterface) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard g(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(rewriter, op->getLoc(), name, type);
  f.setPrivate();
  if (cInterface)
    f->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
               rewriter.getUnitAttr());
  return f;
}

/// A fresh contiguous buffer of `type`; dynamic sizes are those of `like`
/// with the token dimension `dim` scaled (`mul` or divided by `group`).
Value allocResult(PatternRewriter &rewriter, Location loc, MemRefType type,
                  Value like, std::optional<int64_t> dim, int64_t group,
                  bool mul) {
  SmallVector<Value> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (!type.isDynamicDim(i))
      continue;
    Value d = memref::DimOp::create(rewriter, loc, like, i);
    if (dim && *dim == i && group != 1) {
      Value g = arith::ConstantIndexOp::create(rewriter, loc, group);
      d = mul ? arith::MulIOp::create(rewriter, loc, d, g).getResult()
              : arith::DivUIOp::create(rewriter, loc, d, g).getResult();
    }
    sizes.push_back(d);
  }
  return memref::AllocOp::create(rewriter, loc, type, sizes);
}

/// alloc + `tx_rt_<kind>_<type>(in, out[, dim], group)`, or a copy for a
/// group of one.
LogicalResult lowerCollective(PatternRewriter &rewriter, Operation *op,
                              StringRef kind, Value input, Value result,
                              std::optional<int64_t> dim, int64_t group,
                              bool gather) {
  auto inType = cast<MemRefType>(input.getType());
  auto outType = cast<MemRefType>(result.getType());
  StringRef suffix = typeSuffix(inType.getElementType());
  if (suffix.empty())
    return rewriter.notifyMatchFailure(op, "element type has no runtime");
  Location loc = op->getLoc();
  Value out =
      allocResult(rewriter, loc, outType, input, dim, group, gather);
  if (group == 1) {
    memref::CopyOp::create(rewriter, loc, input, out);
    rewriter.replaceOp(op, out);
    return success();
  }
  auto unranked = UnrankedMemRefType::get(inType.getElementType(), 0);
  Type i64 = rewriter.getI64Type();
  SmallVector<Type> argTypes{unranked, unranked};
  SmallVector<Value> args{
      memref::CastOp::create(rewriter, loc, unranked, input),
      memref::CastOp::create(rewriter, loc, unranked, out)};
  if (dim) {
    argTypes.push_back(i64);
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, i64, *dim));
  }
  argTypes.push_back(i64);
  args.push_back(arith::ConstantIntOp::create(rewriter, loc, i64, group));
  std::string name = ("tx_rt_" + kind + "_" + suffix).str();
  func::FuncOp callee = getOrDeclare(
      rewriter, op, name, rewriter.getFunctionType(argTypes, {}), true);
  func::CallOp::create(rewriter, loc, callee, args);
  rewriter.replaceOp(op, out);
  return success();
}

/// tx.all_reduce, tx.reduce_scatter, tx.all_gather: every collective that is
/// not fused with a projection (those are split first, below).
struct CollectiveLowering : OpInterfaceRewritePattern<TxCollectiveOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(TxCollectiveOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (op.isFusedWithProjection())
      return rewriter.notifyMatchFailure(op, "fused with a projection");
    return lowerCollective(
        rewriter, op, op.getCollectiveName(), op.getInput(), op.getResult(),
        op.getCollectiveDim(), op.getGroupSize(),
        /*gather=*/op.getCollectiveKind() == CollectiveKind::AllGather);
  }
};

/// all_gather_linear -> all_gather + linear (the runtime has no fused
/// kernel; the split keeps the semantics).
struct AllGatherLinearSplit : OpRewritePattern<AllGatherLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllGatherLinearOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = cast<MemRefType>(op.getInput().getType());
    SmallVector<int64_t> shape(inType.getShape());
    if (!ShapedType::isDynamic(shape[op.getDim()]))
      shape[op.getDim()] *= op.getGroupSize();
    auto gatheredType = MemRefType::get(shape, inType.getElementType());
    Value gathered =
        AllGatherOp::create(rewriter, op.getLoc(), gatheredType,
                            op.getInput(), op.getDim(), op.getGroupSize());
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getResult().getType(),
                                          op.getLayerAttr(), gathered);
    return success();
  }
};

/// linear_reduce_scatter -> linear + reduce_scatter (sum).
struct LinearReduceScatterSplit : OpRewritePattern<LinearReduceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearReduceScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = cast<MemRefType>(op.getResult().getType());
    auto inType = cast<MemRefType>(op.getInput().getType());
    SmallVector<int64_t> shape(inType.getShape());
    shape.back() = outType.getShape().back();
    auto fullType = MemRefType::get(shape, outType.getElementType());
    Value full = LinearOp::create(rewriter, op.getLoc(), fullType,
                                  op.getLayerAttr(), op.getInput());
    rewriter.replaceOpWithNewOp<ReduceScatterOp>(
        op, outType, full, op.getDim(), op.getGroupSize());
    return success();
  }
};

struct RankLowering : OpRewritePattern<RankOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RankOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getGroupSize() == 1) {
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, 0);
      return success();
    }
    Type i64 = rewriter.getI64Type();
    func::FuncOp callee =
        getOrDeclare(rewriter, op, "tx_rt_rank",
                     rewriter.getFunctionType({i64}, {i64}), false);
    Value group =
        arith::ConstantIntOp::create(rewriter, loc, i64, op.getGroupSize());
    Value r = func::CallOp::create(rewriter, loc, callee, group).getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, rewriter.getIndexType(), r);
    return success();
  }
};

struct LowerCollectivesToRuntimePass
    : public tx::impl::TxLowerCollectivesToRuntimeBase<
          LowerCollectivesToRuntimePass> {
  void runOnOperation() override {
    // Say why a collective cannot be lowered before the conversion fails.
    WalkResult unsupported = getOperation().walk([](Operation *op) {
      auto collective = dyn_cast<TxCollectiveOpInterface>(op);
      if (!collective)
        return WalkResult::advance();
      Type elem = getElementTypeOrSelf(collective.getInput().getType());
      if (!typeSuffix(elem).empty())
        return WalkResult::advance();
      op->emitOpError() << "cannot be lowered: the collectives runtime "
                           "handles f32, f64, f16 and bf16, not "
                        << elem;
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(getContext());
    configureTxCollectivesToRuntimeTarget(target);
    RewritePatternSet patterns(&getContext());
    populateTxCollectivesToRuntimePatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void tx::populateTxCollectivesToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<CollectiveLowering, AllGatherLinearSplit,
               LinearReduceScatterSplit, RankLowering>(patterns.getContext());
}

void tx::configureTxCollectivesToRuntimeTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         memref::MemRefDialect>();
  // Every collective (fused or not) and tx.rank is illegal, the rest stays.
  target.markUnknownOpDynamicallyLegal(
      [](Operation *op) { return !isa<TxCollectiveOpInterface, RankOp>(op); });
}

void tx::registerCollectivesToRuntimePasses() { registerTxCollectivesPasses(); }
