//===- ElementwisePatterns.cpp - elementwise ops, views, params, comms ----===//

#include "LoweringUtils.h"
#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

namespace {

/// The scalar function of a tx.unary kind, in f32 for narrower floats.
static Value buildUnary(OpBuilder &b, Location loc, UnaryKind kind, Value x) {
  Type elemType = x.getType();
  Value v = toCompute(b, loc, x);
  Type ct = v.getType();
  auto c = [&](double d) { return floatConst(b, loc, ct, d); };
  // 1 + exp(-x): the denominator of sigmoid (and of silu, x * sigmoid(x)).
  auto onePlusExpNeg = [&] {
    return arith::AddFOp::create(
        b, loc, c(1.0),
        math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v)));
  };
  Value r;
  switch (kind) {
  case UnaryKind::silu: {
    // x * sigmoid(x) = x / (1 + exp(-x))
    r = arith::DivFOp::create(b, loc, v, onePlusExpNeg());
    break;
  }
  case UnaryKind::gelu: {
    // 0.5 x (1 + erf(x / sqrt 2)), PyTorch's default (approximate='none').
    Value t = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, v, c(M_SQRT1_2)));
    r = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(0.5), v),
        arith::AddFOp::create(b, loc, c(1.0), t));
    break;
  }
  case UnaryKind::gelu_tanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 = arith::MulFOp::create(
        b, loc, v, arith::MulFOp::create(b, loc, v, v));
    Value inner = arith::AddFOp::create(
        b, loc, v, arith::MulFOp::create(b, loc, c(0.044715), x3));
    Value t = math::TanhOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(std::sqrt(2.0 / M_PI)), inner));
    r = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(0.5), v),
        arith::AddFOp::create(b, loc, c(1.0), t));
    break;
  }
  case UnaryKind::relu:
    r = arith::MaximumFOp::create(b, loc, v, c(0.0));
    break;
  case UnaryKind::neg:
    r = arith::NegFOp::create(b, loc, v);
    break;
  case UnaryKind::exp:
    r = math::ExpOp::create(b, loc, v);
    break;
  case UnaryKind::tanh:
    r = math::TanhOp::create(b, loc, v);
    break;
  case UnaryKind::sigmoid:
    r = arith::DivFOp::create(b, loc, c(1.0), onePlusExpNeg());
    break;
  }
  return fromCompute(b, loc, r, elemType);
}

static Value buildBinary(OpBuilder &b, Location loc, BinaryKind kind, Value l,
                         Value r) {
  Type elemType = l.getType();
  Value a = toCompute(b, loc, l), c = toCompute(b, loc, r);
  Value res;
  switch (kind) {
  case BinaryKind::add:
    res = arith::AddFOp::create(b, loc, a, c);
    break;
  case BinaryKind::sub:
    res = arith::SubFOp::create(b, loc, a, c);
    break;
  case BinaryKind::mul:
    res = arith::MulFOp::create(b, loc, a, c);
    break;
  case BinaryKind::div:
    res = arith::DivFOp::create(b, loc, a, c);
    break;
  case BinaryKind::max:
    res = arith::MaximumFOp::create(b, loc, a, c);
    break;
  case BinaryKind::min:
    res = arith::MinimumFOp::create(b, loc, a, c);
    break;
  }
  return fromCompute(b, loc, res, elemType);
}

/// A buffer rhs must match lhs's trailing dimensions (a scalar is a value).
static void checkBroadcastOperand(OpBuilder &b, Operation *op,
                                  const CheckedBuffer &lhs, Value rhsOriginal,
                                  Value rhs) {
  auto rt = dyn_cast<MemRefType>(rhs.getType());
  if (!rt)
    return;
  CheckedBuffer r = checked("rhs", rhsOriginal, rhs);
  int64_t lead = cast<MemRefType>(lhs.buffer.getType()).getRank() -
                 rt.getRank();
  for (int64_t j = 0, e = rt.getRank(); j < e; ++j)
    checkDimsEqual(b, op, lhs, lead + j, r, j);
}

/// Whether the rows of an `_into` op may run in parallel: every buffer it
/// reads is the target itself (in place: each row reads only what it
/// writes) or a scalar. Another buffer might overlap the target's other
/// rows (a view of the same memory); those ops keep the sequential linalg
/// form.
/// `input` (the lowered value of `origInput`) as an op writing `origTarget`
/// element by element must read it: itself when it is the target's own
/// buffer (the same elements in the same layout) or provably disjoint from
/// it, else a copy made first. The tx ops that write a target read all of
/// their inputs before writing (PyTorch refuses a partial overlap; reading
/// first gives its answer wherever it gives one), whatever order, vector
/// width or thread count the lowering then uses.
static Value readBeforeWrite(OpBuilder &b, Location loc, Value origInput,
                             Value input, Value origTarget, bool rows) {
  if (!isa<MemRefType>(input.getType()) || isSameBuffer(origInput, origTarget))
    return input;
  TxAliasAnalysis aa;
  if (aa.alias(origInput, origTarget).isNo())
    return input;
  auto type = cast<MemRefType>(input.getType());
  Value copy = allocLike(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), input);
  buildCopy(b, loc, input, copy, rows);
  return copy;
}

struct UnaryLowering : RowsConversionPattern<UnaryOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(UnaryOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<MemRefType>(op.getResult().getType());
    checkResultShape(rewriter, op,
                     checked("input", op.getInput(), adaptor.getInput()),
                     resType);
    Value out = allocLike(rewriter, loc, resType, adaptor.getInput());
    UnaryKind kind = op.getKind();
    buildMap(rewriter, loc, ValueRange{adaptor.getInput()}, out, rows,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               return buildUnary(nb, nl, kind, a[0]);
             });
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct UnaryIntoLowering : RowsConversionPattern<UnaryIntoOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(UnaryIntoOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    checkSameShape(rewriter, op,
                   checked("input", op.getInput(), adaptor.getInput()),
                   checked("target", op.getTarget(), adaptor.getTarget()));
    UnaryKind kind = op.getKind();
    Value input = readBeforeWrite(rewriter, op.getLoc(), op.getInput(),
                                  adaptor.getInput(), op.getTarget(), rows);
    buildMap(rewriter, op.getLoc(), ValueRange{input}, adaptor.getTarget(),
             rows, [&](OpBuilder &nb, Location nl, ValueRange a) {
               return buildUnary(nb, nl, kind, a[0]);
             });
    rewriter.eraseOp(op);
    return success();
  }
};

struct BinaryLowering : RowsConversionPattern<BinaryOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(BinaryOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    CheckedBuffer lhs = checked("lhs", op.getLhs(), adaptor.getLhs());
    checkBroadcastOperand(rewriter, op, lhs, op.getRhs(), adaptor.getRhs());
    auto resType = cast<MemRefType>(op.getResult().getType());
    checkResultShape(rewriter, op, lhs, resType);
    Value out = allocLike(rewriter, loc, resType, adaptor.getLhs());
    BinaryKind kind = op.getKind();
    buildMap(rewriter, loc, ValueRange{adaptor.getLhs(), adaptor.getRhs()}, out,
             rows, [&](OpBuilder &nb, Location nl, ValueRange a) {
               return buildBinary(nb, nl, kind, a[0], a[1]);
             });
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct BinaryIntoLowering : RowsConversionPattern<BinaryIntoOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(BinaryIntoOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    CheckedBuffer lhs = checked("lhs", op.getLhs(), adaptor.getLhs());
    checkBroadcastOperand(rewriter, op, lhs, op.getRhs(), adaptor.getRhs());
    checkSameShape(rewriter, op, lhs,
                   checked("target", op.getTarget(), adaptor.getTarget()));
    BinaryKind kind = op.getKind();
    Location loc = op.getLoc();
    Value lhsIn = readBeforeWrite(rewriter, loc, op.getLhs(), adaptor.getLhs(),
                                  op.getTarget(), rows);
    Value rhsIn = readBeforeWrite(rewriter, loc, op.getRhs(), adaptor.getRhs(),
                                  op.getTarget(), rows);
    buildMap(rewriter, loc, ValueRange{lhsIn, rhsIn}, adaptor.getTarget(), rows,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               return buildBinary(nb, nl, kind, a[0], a[1]);
             });
    rewriter.eraseOp(op);
    return success();
  }
};

/// tx.copy: rows (vector loads and stores, rows in parallel) where the
/// target allows, else linalg.copy rather than memref.copy, which calls a
/// runtime library function for non-contiguous buffers.
struct CopyLowering : RowsConversionPattern<CopyOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(CopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    checkSameShape(rewriter, op,
                   checked("source", op.getSource(), adaptor.getSource()),
                   checked("target", op.getTarget(), adaptor.getTarget()));
    // A source overlapping the target is read first (memmove's answer).
    Value source = readBeforeWrite(rewriter, op.getLoc(), op.getSource(),
                                   adaptor.getSource(), op.getTarget(), rows);
    buildCopy(rewriter, op.getLoc(), source, adaptor.getTarget(), rows);
    rewriter.eraseOp(op);
    return success();
  }
};

struct GetParamLowering : OpConversionPattern<GetParamOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GetParamOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::GetGlobalOp>(
        op, op.getResult().getType(), getParamGlobalName(op.getParam()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

static OpFoldResult mulOFR(OpBuilder &b, Location loc, OpFoldResult x,
                           OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  return arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// A contiguous source of dynamic shape viewed as `resType` must hold a
/// multiple of the static sizes' product (one dynamic result dimension) or
/// exactly that product (none).
static void checkViewElementCount(OpBuilder &b, ViewOp op,
                                  memref::ExtractStridedMetadataOp meta,
                                  MemRefType resType) {
  Location loc = op.getLoc();
  Value total = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value s : meta.getSizes())
    total = arith::MulIOp::create(b, loc, total, s);
  int64_t known = 1;
  bool oneDynamic = false;
  for (int64_t d : resType.getShape()) {
    if (ShapedType::isDynamic(d))
      oneDynamic = true;
    else
      known *= d;
  }
  Value knownV = arith::ConstantIndexOp::create(b, loc, known);
  std::string source = describeOperand("source", op.getSource());
  if (!oneDynamic) {
    Value ne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, total,
                                     knownV);
    emitRuntimeCheck(b, op, ne, total, knownV,
                     source + " has {0} elements but the view needs {1}");
    return;
  }
  // The source's static sizes may settle it ([?, 64] as [?, 4, 16]).
  int64_t sourceStatic = 1;
  for (int64_t d : cast<MemRefType>(op.getSource().getType()).getShape())
    if (!ShapedType::isDynamic(d))
      sourceStatic *= d;
  if (known == 0 || sourceStatic % known == 0)
    return;
  Value rem = arith::RemUIOp::create(b, loc, total, knownV);
  Value ne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem,
                                   arith::ConstantIndexOp::create(b, loc, 0));
  emitRuntimeCheck(b, op, ne, total, knownV,
                   source + " has {0} elements, not a multiple of {1} (the "
                            "view's static sizes)");
}

/// The result of tx.view as a memref.reinterpret_cast of the source's base
/// buffer. Static sizes and strides come from the (verified) result type;
/// the one dynamic size is the element count over the static ones (a
/// contiguous source) or the kept leading dimension (a strided source).
struct ViewLowering : OpConversionPattern<ViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value src = adaptor.getSource();
    auto srcType = cast<MemRefType>(src.getType());
    auto resType = cast<MemRefType>(op.getResult().getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, src);
    int64_t rank = resType.getRank();
    bool contiguousSource = srcType.getLayout().isIdentity();

    if (contiguousSource && !srcType.hasStaticShape())
      checkViewElementCount(b, op, meta, resType);

    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!resType.isDynamicDim(i)) {
        sizes.push_back(b.getIndexAttr(resType.getDimSize(i)));
        continue;
      }
      if (!contiguousSource) {
        // Only a leading dynamic dimension, kept in place (the verifier).
        sizes.push_back(meta.getSizes()[i]);
        continue;
      }
      OpFoldResult total = b.getIndexAttr(1);
      for (Value s : meta.getSizes())
        total = mulOFR(b, loc, total, s);
      int64_t known = 1;
      for (int64_t j = 0; j < rank; ++j)
        if (j != i)
          known *= resType.getDimSize(j);
      Value div = arith::DivUIOp::create(
          b, loc, getValueOrCreateConstantIndexOp(b, loc, total),
          arith::ConstantIndexOp::create(b, loc, known));
      sizes.push_back(div);
    }

    auto [resStrides, resOffset] = resType.getStridesAndOffset();
    SmallVector<OpFoldResult> strides(rank);
    OpFoldResult running = b.getIndexAttr(1);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (!ShapedType::isDynamic(resStrides[i]))
        strides[i] = b.getIndexAttr(resStrides[i]);
      else if (resType.getLayout().isIdentity())
        strides[i] = running;
      else
        strides[i] = meta.getStrides()[i];
      running = mulOFR(b, loc, running, sizes[i]);
    }
    OpFoldResult offset = ShapedType::isDynamic(resOffset)
                              ? OpFoldResult(meta.getOffset())
                              : OpFoldResult(b.getIndexAttr(resOffset));
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, resType, meta.getBaseBuffer(), offset, sizes, strides);
    return success();
  }
};

/// A memref.cast to `type` when `v` does not have it already (the inferred
/// layout of a memref view may be less static than tx's).
static Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return memref::CastOp::create(b, loc, type, v);
}

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    AffineMap perm = AffineMap::getPermutationMap(
        SmallVector<unsigned>(llvm::map_range(
            op.getPermutation(), [](int64_t p) { return unsigned(p); })),
        getContext());
    Value t = memref::TransposeOp::create(rewriter, op.getLoc(),
                                          adaptor.getSource(),
                                          AffineMapAttr::get(perm));
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), t,
                                  op.getResult().getType()));
    return success();
  }
};

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value src = adaptor.getSource();
    auto srcType = cast<MemRefType>(src.getType());
    int64_t rank = srcType.getRank();
    int64_t dim = op.getDim();
    if (srcType.isDynamicDim(dim)) {
      // The verifier checked static extents; a dynamic one must hold the
      // slice too.
      Value extent = memref::DimOp::create(rewriter, loc, src, dim);
      int64_t end = op.getOffset() + op.getSize();
      Value needed = arith::ConstantIndexOp::create(rewriter, loc, end);
      Value short_ = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, extent, needed);
      emitRuntimeCheck(
          rewriter, op, short_, extent, needed,
          (describeOperand("source", op.getSource()) + " dim " +
           Twine(dim) + " = {0} but the slice [" + Twine(op.getOffset()) +
           ", {1}) needs at least {1}")
              .str());
    }
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = memref::getMixedSizes(rewriter, loc, src);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    offsets[op.getDim()] = rewriter.getIndexAttr(op.getOffset());
    sizes[op.getDim()] = rewriter.getIndexAttr(op.getSize());
    Value s = memref::SubViewOp::create(rewriter, loc, src, offsets, sizes,
                                        strides);
    rewriter.replaceOp(op, castTo(rewriter, loc, s, op.getResult().getType()));
    return success();
  }
};

struct AliasLowering : OpConversionPattern<AliasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AliasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Collectives over a group of one rank
//===----------------------------------------------------------------------===//

/// Over one rank every collective is the identity; the result is still a
/// fresh buffer, so it is a copy. (The fused forms lower as projections.)
struct SingleRankCollectiveLowering
    : OpInterfaceConversionPattern<TxCollectiveOpInterface> {
  using OpInterfaceConversionPattern::OpInterfaceConversionPattern;
  LogicalResult
  matchAndRewrite(TxCollectiveOpInterface op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.isFusedWithProjection())
      return rewriter.notifyMatchFailure(op, "fused with a projection");
    if (op.getGroupSize() != 1)
      return rewriter.notifyMatchFailure(op, "group of more than one rank");
    Location loc = op.getLoc();
    auto resType = cast<MemRefType>(op.getResult().getType());
    Value input = operands[op.getInputOperand().getOperandNumber()];
    checkResultShape(rewriter, op, checked("input", op.getInput(), input),
                     resType);
    Value out = allocLike(rewriter, loc, resType, input);
    linalg::CopyOp::create(rewriter, loc, input, out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct SingleRankLowering : OpConversionPattern<RankOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RankOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getGroupSize() != 1)
      return rewriter.notifyMatchFailure(op, "group of more than one rank");
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, 0);
    return success();
  }
};

} // namespace

namespace mlir::tx::detail {
void populateElementwisePatterns(RewritePatternSet &patterns, bool rows) {
  patterns.add<UnaryLowering, UnaryIntoLowering, BinaryLowering,
               BinaryIntoLowering, CopyLowering>(patterns.getContext(), rows);
  patterns.add<GetParamLowering, ViewLowering, TransposeLowering,
               SliceLowering, AliasLowering, SingleRankCollectiveLowering,
               SingleRankLowering>(patterns.getContext());
}
} // namespace mlir::tx::detail
