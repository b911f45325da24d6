//===- LayerNorm.cpp - tx.layernorm as linalg or as rows ------------------===//
//
// `y = (x - mean(x)) * rsqrt(var(x) + eps) * w (+ b)` over the last
// dimension, as torch.nn.LayerNorm: the biased variance of the centred
// values (two passes over the row, not E[x^2] - E[x]^2, which cancels), all
// in f32 for 16-bit inputs, rounded once into the result.
//
// Two forms, as for rmsnorm (ComputePatterns.cpp): linalg generics (a
// reduction for the sum, one for the centred squares, one elementwise
// normalisation) for any shape, including a dynamic last dimension; and,
// with tx-to-linalg{row-loops} and a static last dimension
// (hasStaticRows), an scf.parallel over the rows, each row reduced in
// vector chunks in a fixed order (results do not depend on the threads).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

using utils::IteratorType;

namespace {

/// 1 / D in f32, D the last dimension of `x` (static or read from it).
static Value inverseLength(OpBuilder &b, Location loc, Value x) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t last = xType.getRank() - 1;
  Type f32 = b.getF32Type();
  if (!xType.isDynamicDim(last))
    return floatConst(b, loc, f32, 1.0 / xType.getDimSize(last));
  Value d = memref::DimOp::create(b, loc, x, last);
  Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), d);
  Value df = arith::UIToFPOp::create(b, loc, f32, di);
  return arith::DivFOp::create(b, loc, floatConst(b, loc, f32, 1.0), df);
}

/// The normalised element: `(v - mean) * rstd (* w) (+ bias)`, all compute
/// values (scalars or vectors of the same type); `w`, `bias` may be null.
static Value normalise(OpBuilder &b, Location loc, Value v, Value mean,
                       Value rstd, Value w, Value bias) {
  Value y = arith::MulFOp::create(b, loc,
                                  arith::SubFOp::create(b, loc, v, mean), rstd);
  if (w)
    y = arith::MulFOp::create(b, loc, y, w);
  return bias ? arith::AddFOp::create(b, loc, y, bias).getResult() : y;
}

/// The linalg form, for any shape.
static void buildLayerNorm(OpBuilder &b, Location loc, Value x, Value w,
                           Value bias, double eps, Value out) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<MemRefType>(x.getType());
  unsigned rank = xType.getRank();
  Type f32 = b.getF32Type();
  Type elemType = xType.getElementType();

  // Per-row sum and sum of centred squares, f32.
  Value zero = floatConst(b, loc, f32, 0);
  Value sum = allocRowStatistic(b, loc, x);
  Value sumsq = allocRowStatistic(b, loc, x);
  linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{sum});
  linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{sumsq});

  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap lead = id.getMajorSubMap(rank - 1);
  AffineMap last = suffixMap(ctx, rank, 1);
  SmallVector<IteratorType> red(rank, IteratorType::parallel);
  red.back() = IteratorType::reduction;
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  Value invD = inverseLength(b, loc, x);
  Value epsV = floatConst(b, loc, f32, eps);

  linalg::GenericOp::create(b, loc, TypeRange{}, ValueRange{x}, ValueRange{sum},
                            ArrayRef<AffineMap>{id, lead}, red,
                            [](OpBuilder &nb, Location nl, ValueRange a) {
                              linalg::YieldOp::create(
                                  nb, nl,
                                  ValueRange{arith::AddFOp::create(
                                      nb, nl, a[1], toCompute(nb, nl, a[0]))});
                            });
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{x, sum}, ValueRange{sumsq},
      ArrayRef<AffineMap>{id, lead, lead}, red,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value mean = arith::MulFOp::create(nb, nl, a[1], invD);
        Value d = arith::SubFOp::create(nb, nl, toCompute(nb, nl, a[0]), mean);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::AddFOp::create(
                nb, nl, a[2], arith::MulFOp::create(nb, nl, d, d))});
      });

  SmallVector<Value> inputs = {x, sum, sumsq};
  SmallVector<AffineMap> maps = {id, lead, lead};
  if (w) {
    inputs.push_back(w);
    maps.push_back(last);
  }
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(last);
  }
  maps.push_back(id);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, inputs, ValueRange{out}, maps, par,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value mean = arith::MulFOp::create(nb, nl, a[1], invD);
        Value var = arith::MulFOp::create(nb, nl, a[2], invD);
        Value rstd = math::RsqrtOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, var, epsV));
        unsigned next = 3;
        Value wv = w ? toCompute(nb, nl, a[next++]) : Value();
        Value bv = bias ? toCompute(nb, nl, a[next]) : Value();
        Value y = normalise(nb, nl, toCompute(nb, nl, a[0]), mean, rstd, wv,
                            bv);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{fromCompute(nb, nl, y, elemType)});
      });
}

/// The row form (hasStaticRows): per row its sum, then the sum of the
/// centred squares, then the row normalised in chunks.
static void buildLayerNormRows(OpBuilder &b, Location loc, Value x, Value w,
                               Value bias, double eps, Value out) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t rank = xType.getRank();
  int64_t length = xType.getShape().back();
  Type f32 = b.getF32Type();
  Type elemType = xType.getElementType();
  Value invD = floatConst(b, loc, f32, 1.0 / length);
  Value epsV = floatConst(b, loc, f32, eps);
  buildParallelRows(
      b, loc, out, rank - 1, [&](OpBuilder &rb, Location rl, ValueRange ivs) {
        auto load = [&](OpBuilder &cb, Location cl, Value buffer,
                        ValueRange lead, Value offset, int64_t width) {
          return toCompute(cb, cl,
                           loadChunk(cb, cl, buffer, lead, offset, width));
        };
        auto splat = [](OpBuilder &cb, Location cl, Value like, Value s) {
          return vector::BroadcastOp::create(cb, cl, like.getType(), s)
              .getResult();
        };
        Value sum = rowAccumulate(rb, rl, length,
                                  [&](OpBuilder &cb, Location cl, Value offset,
                                      int64_t width, Value acc) -> Value {
                                    return arith::AddFOp::create(
                                        cb, cl, acc,
                                        load(cb, cl, x, ivs, offset, width));
                                  });
        Value mean = arith::MulFOp::create(rb, rl, sum, invD);
        Value sumsq =
            rowAccumulate(rb, rl, length,
                          [&](OpBuilder &cb, Location cl, Value offset,
                              int64_t width, Value acc) -> Value {
                            Value v = load(cb, cl, x, ivs, offset, width);
                            Value d = arith::SubFOp::create(
                                cb, cl, v, splat(cb, cl, v, mean));
                            return vector::FMAOp::create(cb, cl, d, d, acc);
                          });
        Value rstd = math::RsqrtOp::create(
            rb, rl,
            arith::AddFOp::create(
                rb, rl, arith::MulFOp::create(rb, rl, sumsq, invD), epsV));
        forEachChunk(
            rb, rl, length,
            [&](OpBuilder &cb, Location cl, Value offset, int64_t width) {
              Value v = load(cb, cl, x, ivs, offset, width);
              Value wv = w ? load(cb, cl, w, {}, offset, width) : Value();
              Value bv = bias ? load(cb, cl, bias, {}, offset, width) : Value();
              Value y = normalise(cb, cl, v, splat(cb, cl, v, mean),
                                  splat(cb, cl, v, rstd), wv, bv);
              storeChunk(cb, cl, fromCompute(cb, cl, y, elemType), out, ivs,
                         offset);
            });
      });
}

struct LayerNormLowering : RowsConversionPattern<LayerNormOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<MemRefType>(op.getResult().getType());
    int64_t last = resType.getRank() - 1;
    CheckedBuffer input = checked("input", op.getInput(), adaptor.getInput());
    if (op.getWeight())
      checkDimsEqual(rewriter, op,
                     checked("weight", op.getWeight(), adaptor.getWeight()), 0,
                     input, last);
    if (op.getBias())
      checkDimsEqual(rewriter, op,
                     checked("bias", op.getBias(), adaptor.getBias()), 0, input,
                     last);
    checkResultShape(rewriter, op, input, resType);
    Value out = allocLike(rewriter, loc, resType, adaptor.getInput());
    double eps = op.getEpsilon().convertToDouble();
    if (rows && hasStaticRows(adaptor.getInput().getType()))
      buildLayerNormRows(rewriter, loc, adaptor.getInput(), adaptor.getWeight(),
                         adaptor.getBias(), eps, out);
    else
      buildLayerNorm(rewriter, loc, adaptor.getInput(), adaptor.getWeight(),
                     adaptor.getBias(), eps, out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

namespace mlir::tx::detail {
void populateLayerNormPatterns(RewritePatternSet &patterns, bool rows) {
  patterns.add<LayerNormLowering>(patterns.getContext(), rows);
}
} // namespace mlir::tx::detail
