//===- ComputePatterns.cpp - linear, norms, rotary and attention ----------===//
//
// The transformer ops of tx as linalg on buffers. Inputs may be strided
// views (slices of a merged projection); results are fresh contiguous
// buffers.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

using utils::IteratorType;

namespace {

/// `y = x W^T (+ b)` into `out`. W is `[N, K]`; x is `[..., K]`, out
/// `[..., N]`. Leading dims are collapsed so that the GEMM is a 2-D
/// linalg.matmul (transposed-B maps) that the CPU pipeline tiles; a strided
/// input that cannot be collapsed gets an N-D linalg.generic contraction.
static void buildLinear(OpBuilder &b, Location loc, LayerOp layer, Value x,
                        Value out) {
  MLIRContext *ctx = b.getContext();
  auto outType = cast<MemRefType>(out.getType());
  Type elemType = outType.getElementType();
  auto wType = MemRefType::get(
      {static_cast<int64_t>(layer.getOutFeatures()),
       static_cast<int64_t>(layer.getInFeatures())}, elemType);
  Value w = memref::GetGlobalOp::create(
      b, loc, wType, getWeightGlobalName(layer.getSymName()));

  // 16-bit floats accumulate in f32, as PyTorch's (and cuBLAS's) GEMMs do:
  // the contraction writes an f32 buffer that is rounded into `out` at the
  // end. (Accumulating in bf16 would round every partial sum.)
  Type accType = computeType(elemType);
  Value acc = accType == elemType
                  ? out
                  : allocLike(b, loc,
                              MemRefType::get(outType.getShape(), accType),
                              out);

  // Initialise the accumulator with the bias (broadcast) or zero.
  if (layer.getBias()) {
    auto bType = MemRefType::get({static_cast<int64_t>(layer.getOutFeatures())}, elemType);
    Value bias = memref::GetGlobalOp::create(
        b, loc, bType, getBiasGlobalName(layer.getSymName()));
    buildElementwise(b, loc, ValueRange{bias}, acc,
                     [](OpBuilder &nb, Location nl, ValueRange a) {
                       return toCompute(nb, nl, a[0]);
                     });
  } else {
    linalg::FillOp::create(b, loc, ValueRange{floatConst(b, loc, accType, 0)},
                           ValueRange{acc});
  }

  auto xType = cast<MemRefType>(x.getType());
  int64_t rank = xType.getRank();
  SmallVector<ReassociationIndices> reassoc;
  if (rank > 2) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 1; ++i)
      lead.push_back(i);
    reassoc = {lead, {rank - 1}};
  }
  // An input of rank > 2 whose leading dimensions cannot be collapsed (a
  // slice of a merged projection's output: its token stride is not known
  // to be a multiple of the rows) is copied into a contiguous buffer first.
  // The GEMM then runs as the 2-D matmul, with the same sums in the same
  // order as on a contiguous input (the N-D contraction below sums in
  // another order: fused and unfused programs differed in the last bit,
  // and in bf16 by a rounding step).
  if (rank > 2 &&
      !memref::CollapseShapeOp::isGuaranteedCollapsible(xType, reassoc)) {
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i < rank; ++i)
      if (xType.isDynamicDim(i))
        dynSizes.push_back(memref::DimOp::create(b, loc, x, i));
    auto contiguous = MemRefType::get(xType.getShape(), xType.getElementType(),
                                      MemRefLayoutAttrInterface(),
                                      xType.getMemorySpace());
    Value copy = memref::AllocOp::create(b, loc, contiguous, dynSizes);
    linalg::CopyOp::create(b, loc, x, copy);
    x = copy;
    xType = contiguous;
  }
  if (rank >= 2) {
    Value x2 = x, acc2 = acc;
    if (rank > 2) {
      x2 = memref::CollapseShapeOp::create(b, loc, x, reassoc);
      acc2 = memref::CollapseShapeOp::create(b, loc, acc, reassoc);
    }
    // Mixed types (bf16 x bf16 -> f32) get the widening casts in the body.
    linalg::MatmulTransposeBOp::create(b, loc, ValueRange{x2, w},
                                       ValueRange{acc2});
  } else {
    // A vector input: y[n] = sum_k x[k] W[n, k].
    unsigned nLoops = rank + 1;
    SmallVector<AffineExpr> xe, we, oe;
    for (int64_t i = 0; i < rank - 1; ++i) {
      xe.push_back(getAffineDimExpr(i, ctx));
      oe.push_back(getAffineDimExpr(i, ctx));
    }
    AffineExpr n = getAffineDimExpr(rank - 1, ctx),
               k = getAffineDimExpr(rank, ctx);
    xe.push_back(k);
    we = {n, k};
    oe.push_back(n);
    SmallVector<AffineMap> maps = {AffineMap::get(nLoops, 0, xe, ctx),
                                   AffineMap::get(nLoops, 0, we, ctx),
                                   AffineMap::get(nLoops, 0, oe, ctx)};
    SmallVector<IteratorType> iters(nLoops, IteratorType::parallel);
    iters.back() = IteratorType::reduction;
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{x, w}, ValueRange{acc}, maps, iters,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          Value m = arith::MulFOp::create(nb, nl, toCompute(nb, nl, a[0]),
                                          toCompute(nb, nl, a[1]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], m)});
        });
  }

  // The f32 buffer is a temporary like any other intermediate: the
  // pipelines' buffer deallocation frees it.
  if (acc != out)
    buildElementwise(b, loc, ValueRange{acc}, out,
                     [&](OpBuilder &nb, Location nl, ValueRange a) {
                       return fromCompute(nb, nl, a[0], elemType);
                     });
}

/// Projections: tx.linear, and the fused collective forms over a group of
/// one (where the collective is the identity).
struct LinearLowering : OpInterfaceConversionPattern<TxProjectionOpInterface> {
  using OpInterfaceConversionPattern::OpInterfaceConversionPattern;
  /// Layers are module symbols that the conversion neither adds nor erases,
  /// so the tables built on the first lookup stay valid for the whole run.
  mutable SymbolTableCollection symbols;
  LogicalResult
  matchAndRewrite(TxProjectionOpInterface op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (auto collective = dyn_cast<TxCollectiveOpInterface>(op.getOperation()))
      if (collective.getGroupSize() != 1)
        return rewriter.notifyMatchFailure(op, "group of more than one rank");
    // One symbol table for the whole conversion (lookupLayer scans the
    // module's symbols: quadratic in the number of projections).
    auto layer =
        symbols.lookupNearestSymbolFrom<LayerOp>(op, op.getLayerAttr());
    if (!layer)
      return rewriter.notifyMatchFailure(op, "layer not found");
    auto resType = cast<MemRefType>(op.getResult().getType());
    Location loc = op.getLoc();
    Value adaptedInput = operands[op.getInputOperand().getOperandNumber()];
    CheckedBuffer input = checked("input", op.getInput(), adaptedInput);
    int64_t rank = resType.getRank();
    checkDimEquals(rewriter, op, input, rank - 1, layer.getInFeatures(),
                   ("the in_features of '@" + layer.getSymName() + "'").str());
    // Leading (token) dimensions come from the input; the last is the
    // layer's out_features, whatever the result type says.
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      if (resType.isDynamicDim(i))
        dynSizes.push_back(
            memref::DimOp::create(rewriter, loc, adaptedInput, i));
      else
        checkDimEquals(rewriter, op, input, i, resType.getDimSize(i),
                       ("dim " + Twine(i) + " of the result type").str());
    }
    if (resType.isDynamicDim(rank - 1))
      dynSizes.push_back(arith::ConstantIndexOp::create(
          rewriter, loc, layer.getOutFeatures()));
    Value out = memref::AllocOp::create(rewriter, loc, resType, dynSizes);
    buildLinear(rewriter, loc, layer, adaptedInput, out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// The scale of an rmsnorm: its weight element (a compute value) plus the
/// op's weight_offset (Gemma's `1 + weight`).
static Value normScale(OpBuilder &b, Location loc, Value w, double offset) {
  Value wc = toCompute(b, loc, w);
  if (offset == 0.0)
    return wc;
  return arith::AddFOp::create(b, loc, wc,
                               floatConst(b, loc, wc.getType(), offset));
}

/// `out = x * rsqrt(mean(x^2) + eps) * (w + offset)` over the last
/// dimension, the sum of squares in f32; without `w` (a weightless norm)
/// `x * rsqrt(mean(x^2) + eps)`.
static void buildRMSNorm(OpBuilder &b, Location loc, Value x, Value w,
                         double eps, double offset, Value out) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<MemRefType>(x.getType());
  unsigned rank = xType.getRank();
  Type f32 = b.getF32Type();
  Type elemType = xType.getElementType();

  Value sumsq = allocRowStatistic(b, loc, x);
  linalg::FillOp::create(b, loc, ValueRange{floatConst(b, loc, f32, 0)},
                         ValueRange{sumsq});

  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap lead = id.getMajorSubMap(rank - 1);
  AffineMap last = suffixMap(ctx, rank, 1);
  SmallVector<IteratorType> redIters(rank, IteratorType::parallel);
  redIters.back() = IteratorType::reduction;
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{x}, ValueRange{sumsq},
      ArrayRef<AffineMap>{id, lead}, redIters,
      [](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = toCompute(nb, nl, a[0]);
        Value sq = arith::MulFOp::create(nb, nl, v, v);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{arith::AddFOp::create(nb, nl, a[1], sq)});
      });

  // 1 / D as f32, D static or read from the buffer.
  Value invD;
  if (!xType.isDynamicDim(rank - 1)) {
    invD = floatConst(b, loc, f32, 1.0 / xType.getDimSize(rank - 1));
  } else {
    Value d = memref::DimOp::create(b, loc, x, rank - 1);
    Value di = arith::IndexCastOp::create(b, loc, b.getI64Type(), d);
    Value df = arith::UIToFPOp::create(b, loc, f32, di);
    invD = arith::DivFOp::create(b, loc, floatConst(b, loc, f32, 1.0), df);
  }
  Value epsV = floatConst(b, loc, f32, eps);
  SmallVector<IteratorType> par(rank, IteratorType::parallel);
  SmallVector<Value> inputs = {x, sumsq};
  SmallVector<AffineMap> maps = {id, lead};
  if (w) {
    inputs.push_back(w);
    maps.push_back(last);
  }
  maps.push_back(id);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, inputs, ValueRange{out}, maps, par,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value mean = arith::MulFOp::create(nb, nl, a[1], invD);
        Value inv = math::RsqrtOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, mean, epsV));
        Value y = arith::MulFOp::create(nb, nl, toCompute(nb, nl, a[0]), inv);
        if (w)
          y = arith::MulFOp::create(nb, nl, y, normScale(nb, nl, a[2], offset));
        linalg::YieldOp::create(nb, nl,
                                ValueRange{fromCompute(nb, nl, y, elemType)});
      });
}

/// The sum of squares of row `lead` of `x` (static length), in f32: the
/// squares of each chunk of kRowChunk elements accumulated lane by lane
/// (one FMA per element, in order along the row), the lanes summed by a
/// fixed tree, then the remainder's squares likewise (rowAccumulate). With
/// `addend`, the row is `x + addend`, rounded to the element type and
/// stored into `sum` first (add_rmsnorm's residual), and its squares are
/// those of the stored values.
static Value rowSumOfSquares(OpBuilder &b, Location loc, Value x, Value addend,
                             Value sum, ValueRange lead) {
  auto xType = cast<MemRefType>(x.getType());
  Type elemType = xType.getElementType();
  int64_t length = xType.getShape().back();
  // The chunk at `offset` in f32, after the addition where there is one.
  auto load = [&](OpBuilder &cb, Location cl, Value offset, int64_t width) {
    Value v = loadChunk(cb, cl, x, lead, offset, width);
    if (!addend)
      return toCompute(cb, cl, v);
    Value r = loadChunk(cb, cl, addend, lead, offset, width);
    Value stored =
        fromCompute(cb, cl,
                    arith::AddFOp::create(cb, cl, toCompute(cb, cl, v),
                                          toCompute(cb, cl, r)),
                    elemType);
    storeChunk(cb, cl, stored, sum, lead, offset);
    return toCompute(cb, cl, stored);
  };
  return rowAccumulate(b, loc, length,
                       [&](OpBuilder &cb, Location cl, Value offset,
                           int64_t width, Value acc) -> Value {
                         Value v = load(cb, cl, offset, width);
                         return vector::FMAOp::create(cb, cl, v, v, acc);
                       });
}

/// buildRMSNorm as rows (hasStaticRows): an scf.parallel over the leading
/// dimensions; per row its sum of squares (rowSumOfSquares), then the row
/// scaled in chunks. With `addend`, the norm is of `x + addend`, which is
/// stored into `sum` (see rowSumOfSquares).
static void buildRMSNormRows(OpBuilder &b, Location loc, Value x, Value w,
                             double eps, double weightOffset, Value out,
                             Value addend = {}, Value sum = {}) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t rank = xType.getRank();
  int64_t length = xType.getShape().back();
  Type f32 = b.getF32Type();
  Type elemType = xType.getElementType();
  Value invD = floatConst(b, loc, f32, 1.0 / length);
  Value epsV = floatConst(b, loc, f32, eps);
  Value source = addend ? sum : x;
  buildParallelRows(
      b, loc, out, rank - 1, [&](OpBuilder &rb, Location rl, ValueRange ivs) {
        Value sumsq = rowSumOfSquares(rb, rl, x, addend, sum, ivs);
        Value mean = arith::MulFOp::create(rb, rl, sumsq, invD);
        Value inv = math::RsqrtOp::create(
            rb, rl, arith::AddFOp::create(rb, rl, mean, epsV));
        forEachChunk(
            rb, rl, length,
            [&](OpBuilder &cb, Location cl, Value offset, int64_t width) {
              Value v = toCompute(
                  cb, cl, loadChunk(cb, cl, source, ivs, offset, width));
              Value y = arith::MulFOp::create(
                  cb, cl, v,
                  vector::BroadcastOp::create(cb, cl, v.getType(), inv));
              if (w)
                y = arith::MulFOp::create(
                    cb, cl, y,
                    normScale(cb, cl, loadChunk(cb, cl, w, {}, offset, width),
                              weightOffset));
              storeChunk(cb, cl, fromCompute(cb, cl, y, elemType), out, ivs,
                         offset);
            });
      });
}

struct RMSNormLowering : RowsConversionPattern<RMSNormOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<MemRefType>(op.getResult().getType());
    CheckedBuffer input = checked("input", op.getInput(), adaptor.getInput());
    if (op.getWeight())
      checkDimsEqual(rewriter, op,
                     checked("weight", op.getWeight(), adaptor.getWeight()), 0,
                     input, resType.getRank() - 1);
    checkResultShape(rewriter, op, input, resType);
    Value out = allocLike(rewriter, loc, resType, adaptor.getInput());
    double eps = op.getEpsilon().convertToDouble();
    double offset = op.getWeightOffset().convertToDouble();
    if (rows && hasStaticRows(adaptor.getInput().getType()))
      buildRMSNormRows(rewriter, loc, adaptor.getInput(), adaptor.getWeight(),
                       eps, offset, out);
    else
      buildRMSNorm(rewriter, loc, adaptor.getInput(), adaptor.getWeight(), eps,
                   offset, out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct AddRMSNormLowering : RowsConversionPattern<AddRMSNormOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(AddRMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elemType = op.getResult().getType().getElementType();
    auto resType = cast<MemRefType>(op.getResult().getType());
    CheckedBuffer input = checked("input", op.getInput(), adaptor.getInput());
    checkSameShape(rewriter, op, input,
                   checked("residual", op.getResidual(),
                           adaptor.getResidual()));
    if (op.getWeight())
      checkDimsEqual(rewriter, op,
                     checked("weight", op.getWeight(), adaptor.getWeight()), 0,
                     input, resType.getRank() - 1);
    checkResultShape(rewriter, op, input, resType);
    checkResultShape(rewriter, op, input,
                     cast<MemRefType>(op.getResidualOut().getType()),
                     "residual_out");
    Value resOut = allocLike(rewriter, loc, cast<MemRefType>(op.getResidualOut().getType()),
                             adaptor.getInput());
    double eps = op.getEpsilon().convertToDouble();
    double offset = op.getWeightOffset().convertToDouble();
    if (rows && hasStaticRows(adaptor.getInput().getType()) &&
        hasStaticRows(adaptor.getResidual().getType())) {
      Value out = allocLike(rewriter, loc, resType, adaptor.getInput());
      buildRMSNormRows(rewriter, loc, adaptor.getInput(), adaptor.getWeight(),
                       eps, offset, out, adaptor.getResidual(), resOut);
      rewriter.replaceOp(op, {out, resOut});
      return success();
    }
    buildElementwise(rewriter, loc,
                     ValueRange{adaptor.getInput(), adaptor.getResidual()},
                     resOut, [&](OpBuilder &nb, Location nl, ValueRange a) {
                       Value s = arith::AddFOp::create(
                           nb, nl, toCompute(nb, nl, a[0]),
                           toCompute(nb, nl, a[1]));
                       return fromCompute(nb, nl, s, elemType);
                     });
    Value out = allocLike(rewriter, loc, cast<MemRefType>(op.getResult().getType()),
                          adaptor.getInput());
    buildRMSNorm(rewriter, loc, resOut, adaptor.getWeight(), eps, offset, out);
    rewriter.replaceOp(op, {out, resOut});
    return success();
  }
};

/// One rotation of the pairs (a1, a2) by the angles whose cosines and sines
/// are (c, s), in f32 (scalars or vectors alike): `r1 = a1 c - a2 s`,
/// `r2 = a2 c + a1 s`. Both layouts and both lowerings compute it so.
static std::pair<Value, Value> rotatePairs(OpBuilder &b, Location loc, Value a1,
                                           Value a2, Value c, Value s) {
  Value r1 = arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, a1, c),
                                   arith::MulFOp::create(b, loc, a2, s));
  Value r2 = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a2, c),
                                   arith::MulFOp::create(b, loc, a1, s));
  return {r1, r2};
}

/// Rotary as rows: an scf.parallel over (token, head), in each row the
/// pairs in chunks, with the token's cos and sin rows. NeoX: a chunk of
/// each half. Interleaved: the chunk's pairs are adjacent features, loaded
/// as one vector of twice the width and split into even and odd lanes
/// (vector.deinterleave), the results merged back (vector.interleave) and
/// stored as one vector.
static void buildRotaryRows(OpBuilder &b, Location loc, Value x, Value cos,
                            Value sin, Value out, bool interleaved) {
  auto xType = cast<MemRefType>(x.getType());
  int64_t half = xType.getShape().back() / 2;
  Type elemType = xType.getElementType();
  buildParallelRows(
      b, loc, out, 2, [&](OpBuilder &rb, Location rl, ValueRange ivs) {
        ValueRange token = ivs.take_front();
        forEachChunk(
            rb, rl, half,
            [&](OpBuilder &cb, Location cl, Value offset, int64_t width) {
              auto load = [&](Value buffer, ValueRange lead, Value at,
                              int64_t count) {
                return toCompute(cb, cl,
                                 loadChunk(cb, cl, buffer, lead, at, count));
              };
              if (interleaved) {
                Value at = arith::MulIOp::create(
                    cb, cl, offset, arith::ConstantIndexOp::create(cb, cl, 2));
                auto split = vector::DeinterleaveOp::create(
                    cb, cl, load(x, ivs, at, 2 * width));
                Value c = load(cos, token, offset, width);
                Value s = load(sin, token, offset, width);
                auto [r1, r2] = rotatePairs(cb, cl, split.getRes1(),
                                            split.getRes2(), c, s);
                Value merged = vector::InterleaveOp::create(cb, cl, r1, r2);
                storeChunk(cb, cl, fromCompute(cb, cl, merged, elemType), out,
                           ivs, at);
                return;
              }
              Value offset2 = arith::AddIOp::create(
                  cb, cl, offset, arith::ConstantIndexOp::create(cb, cl, half));
              Value a1 = load(x, ivs, offset, width);
              Value a2 = load(x, ivs, offset2, width);
              Value c = load(cos, token, offset, width);
              Value s = load(sin, token, offset, width);
              auto [r1, r2] = rotatePairs(cb, cl, a1, a2, c, s);
              storeChunk(cb, cl, fromCompute(cb, cl, r1, elemType), out, ivs,
                         offset);
              storeChunk(cb, cl, fromCompute(cb, cl, r2, elemType), out, ivs,
                         offset2);
            });
      });
}

/// Rotary: pair i of each head, (x1, x2), rotated by angle i:
/// `out1 = x1 cos - x2 sin`, `out2 = x2 cos + x1 sin`. NeoX: x1, x2 are
/// the halves of the head dimension; interleaved: its even and odd
/// features (views of stride 2 in the linalg form).
struct RotaryLowering : RowsConversionPattern<RotaryOp> {
  using RowsConversionPattern::RowsConversionPattern;
  LogicalResult
  matchAndRewrite(RotaryOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<MemRefType>(op.getInput().getType());
    int64_t headDim = inType.getDimSize(2);
    if (std::string why = dynamicHeadShape(op); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    int64_t half = headDim / 2;
    bool interleaved = op.getInterleaved();
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Type elemType = inType.getElementType();
    Value x = adaptor.getInput();
    CheckedBuffer input = checked("input", op.getInput(), x);
    using Table = std::tuple<StringRef, Value, Value>;
    for (auto [role, original, converted] :
         {Table{"cos", op.getCos(), adaptor.getCos()},
          Table{"sin", op.getSin(), adaptor.getSin()}}) {
      CheckedBuffer table = checked(role, original, converted);
      checkDimsEqual(rewriter, op, input, 0, table, 0);
      checkDimEquals(rewriter, op, table, 1, half, "head_dim / 2 of the input");
    }
    auto resType = cast<MemRefType>(op.getResult().getType());
    checkResultShape(rewriter, op, input, resType);
    Value out = allocLike(rewriter, loc, resType, x);
    if (rows && half > 0) {
      buildRotaryRows(rewriter, loc, x, adaptor.getCos(), adaptor.getSin(),
                      out, interleaved);
      rewriter.replaceOp(op, out);
      return success();
    }
    // The first and second feature of each pair: offsets 0 and half with
    // stride 1 (NeoX), or offsets 0 and 1 with stride 2 (interleaved).
    int64_t second = interleaved ? 1 : half, stride = interleaved ? 2 : 1;
    Value x1 = sliceLastDim(rewriter, loc, x, 0, half, stride);
    Value x2 = sliceLastDim(rewriter, loc, x, second, half, stride);
    Value o1 = sliceLastDim(rewriter, loc, out, 0, half, stride);
    Value o2 = sliceLastDim(rewriter, loc, out, second, half, stride);
    AffineMap id = rewriter.getMultiDimIdentityMap(3);
    AffineMap ti = AffineMap::get(
        3, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(2, ctx)}, ctx);
    SmallVector<IteratorType> par(3, IteratorType::parallel);
    linalg::GenericOp::create(
        rewriter, loc, TypeRange{},
        ValueRange{x1, x2, adaptor.getCos(), adaptor.getSin()},
        ValueRange{o1, o2}, ArrayRef<AffineMap>{id, id, ti, ti, id, id}, par,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          auto [r1, r2] = rotatePairs(
              nb, nl, toCompute(nb, nl, a[0]), toCompute(nb, nl, a[1]),
              toCompute(nb, nl, a[2]), toCompute(nb, nl, a[3]));
          linalg::YieldOp::create(nb, nl,
                                  ValueRange{fromCompute(nb, nl, r1, elemType),
                                             fromCompute(nb, nl, r2, elemType)});
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// Scaled dot-product attention with GQA. Query head `h = kh * G + g` reads
/// kv head `kh`; scores live in an f32 buffer `[KH, G, T, S]`. The softmax
/// subtracts the row maximum; a fully masked row gives zeros. Causal masking
/// aligns the last query with the last key: key `s` is visible to query `t`
/// when `s <= t + (S - T)`, and with a window W also `t + (S - T) - s < W`.
/// A softcap c replaces each scaled score x by `c * tanh(x / c)` before the
/// mask.
struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto qType = cast<MemRefType>(op.getQuery().getType());
    auto kType = cast<MemRefType>(op.getKey().getType());
    auto vType = cast<MemRefType>(op.getValue().getType());
    int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1);
    if (std::string why = dynamicHeadShape(op); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    int64_t groups = hq / hkv;
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    OpBuilder &b = rewriter;
    Type f32 = b.getF32Type();
    Type elemType = qType.getElementType();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    int64_t headDim = qType.getDimSize(2), vHeadDim = vType.getDimSize(2);

    CheckedBuffer query = checked("query", op.getQuery(), q);
    CheckedBuffer key = checked("key", op.getKey(), k);
    CheckedBuffer value = checked("value", op.getValue(), v);
    checkAttentionShapes(b, op, query, key, value, headDim);
    auto resType = cast<MemRefType>(op.getResult().getType());

    Value tLen = memref::DimOp::create(b, loc, q, 0);
    Value sLen = memref::DimOp::create(b, loc, k, 0);
    int64_t T = qType.getDimSize(0), S = kType.getDimSize(0);
    SmallVector<Value> tsDyn;
    if (ShapedType::isDynamic(T))
      tsDyn.push_back(tLen);
    if (ShapedType::isDynamic(S))
      tsDyn.push_back(sLen);
    Value scores = memref::AllocOp::create(
        b, loc, MemRefType::get({hkv, groups, T, S}, f32), tsDyn);
    SmallVector<Value> tDyn;
    if (ShapedType::isDynamic(T))
      tDyn.push_back(tLen);
    Value rowMax = memref::AllocOp::create(
        b, loc, MemRefType::get({hkv, groups, T}, f32), tDyn);
    Value rowSum = memref::AllocOp::create(
        b, loc, MemRefType::get({hkv, groups, T}, f32), tDyn);
    Value acc = memref::AllocOp::create(
        b, loc, MemRefType::get({hkv, groups, T, vHeadDim}, f32), tDyn);

    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto map = [&](unsigned n, ArrayRef<AffineExpr> e) {
      return AffineMap::get(n, 0, e, ctx);
    };
    auto headExpr = [&](AffineExpr kh, AffineExpr g) { return kh * groups + g; };
    Value zero = floatConst(b, loc, f32, 0.0);
    Value negInf =
        floatConst(b, loc, f32, -std::numeric_limits<double>::infinity());
    using IT = IteratorType;

    // 1. scores[kh,g,t,s] = sum_d q[t, kh*G+g, d] k[s, kh, d]; loops
    //    (kh, g, t, s, d).
    linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{scores});
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{q, k}, ValueRange{scores},
        ArrayRef<AffineMap>{map(5, {d(2), headExpr(d(0), d(1)), d(4)}),
                            map(5, {d(3), d(0), d(4)}),
                            map(5, {d(0), d(1), d(2), d(3)})},
        SmallVector<IT>{IT::parallel, IT::parallel, IT::parallel,
                        IT::parallel, IT::reduction},
        [](OpBuilder &nb, Location nl, ValueRange a) {
          Value m = arith::MulFOp::create(nb, nl, toCompute(nb, nl, a[0]),
                                          toCompute(nb, nl, a[1]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], m)});
        });

    // 2. Scale and mask in place; 3. row maximum.
    Value scale = floatConst(b, loc, f32, op.getScale().convertToDouble());
    Value shift = arith::SubIOp::create(b, loc, sLen, tLen);
    bool causal = op.getCausal();
    std::optional<uint64_t> window = op.getWindow();
    std::optional<APFloat> softcap = op.getSoftcap();
    AffineMap id4 = b.getMultiDimIdentityMap(4);
    AffineMap row4 = map(4, {d(0), d(1), d(2)});
    SmallVector<IT> par4(4, IT::parallel);
    SmallVector<IT> red4 = {IT::parallel, IT::parallel, IT::parallel,
                            IT::reduction};
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{}, ValueRange{scores},
        ArrayRef<AffineMap>{id4}, par4,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value s = arith::MulFOp::create(nb, nl, a[0], scale);
          if (softcap)
            s = softcapScore(nb, nl, s, softcap->convertToDouble());
          if (causal) {
            Value t = linalg::IndexOp::create(nb, nl, 2);
            Value key = linalg::IndexOp::create(nb, nl, 3);
            Value last = arith::AddIOp::create(nb, nl, t, shift);
            Value masked = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::sgt, key, last);
            if (window) {
              // Outside the window: last - key >= W.
              Value back = arith::SubIOp::create(nb, nl, last, key);
              Value far = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::sge, back,
                  arith::ConstantIndexOp::create(nb, nl, *window));
              masked = arith::OrIOp::create(nb, nl, masked, far);
            }
            s = arith::SelectOp::create(nb, nl, masked, negInf, s);
          }
          linalg::YieldOp::create(nb, nl, ValueRange{s});
        });
    linalg::FillOp::create(b, loc, ValueRange{negInf}, ValueRange{rowMax});
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{scores}, ValueRange{rowMax},
        ArrayRef<AffineMap>{id4, row4}, red4,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::MaximumFOp::create(nb, nl, a[0], a[1])});
        });

    // 4. p = exp(s - max) in place (0 for a fully masked row); 5. row sums.
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{rowMax}, ValueRange{scores},
        ArrayRef<AffineMap>{row4, id4}, par4,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value isEmpty = arith::CmpFOp::create(
              nb, nl, arith::CmpFPredicate::OEQ, a[0], negInf);
          Value e = math::ExpOp::create(
              nb, nl, arith::SubFOp::create(nb, nl, a[1], a[0]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::SelectOp::create(nb, nl, isEmpty, zero, e)});
        });
    linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{rowSum});
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{scores}, ValueRange{rowSum},
        ArrayRef<AffineMap>{id4, row4}, red4,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[0], a[1])});
        });

    // 6. acc[kh,g,t,d] = sum_s p[kh,g,t,s] v[s,kh,d]; loops (kh,g,t,d,s).
    linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{acc});
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{scores, v}, ValueRange{acc},
        ArrayRef<AffineMap>{map(5, {d(0), d(1), d(2), d(4)}),
                            map(5, {d(4), d(0), d(3)}),
                            map(5, {d(0), d(1), d(2), d(3)})},
        SmallVector<IT>{IT::parallel, IT::parallel, IT::parallel,
                        IT::parallel, IT::reduction},
        [](OpBuilder &nb, Location nl, ValueRange a) {
          Value m = arith::MulFOp::create(nb, nl, a[0], toCompute(nb, nl, a[1]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], m)});
        });

    // 7. out[t, kh*G+g, d] = acc / sum; loops (kh, g, t, d).
    Value out = allocLike(b, loc, cast<MemRefType>(op.getResult().getType()), q);
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{acc, rowSum}, ValueRange{out},
        ArrayRef<AffineMap>{id4, row4,
                            map(4, {d(2), headExpr(d(0), d(1)), d(3)})},
        par4, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value isEmpty = arith::CmpFOp::create(
              nb, nl, arith::CmpFPredicate::OEQ, a[1], zero);
          Value r = arith::DivFOp::create(nb, nl, a[0], a[1]);
          r = arith::SelectOp::create(nb, nl, isEmpty, zero, r);
          linalg::YieldOp::create(nb, nl,
                                  ValueRange{fromCompute(nb, nl, r, elemType)});
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

std::string tx::detail::dynamicHeadShape(Operation *op) {
  auto dynamic = [](Value v, unsigned dim) {
    return cast<MemRefType>(v.getType()).isDynamicDim(dim);
  };
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (dynamic(attention.getQuery(), 1) || dynamic(attention.getKey(), 1))
      return "its head counts must be static";
    if (dynamic(attention.getQuery(), 2) || dynamic(attention.getValue(), 2))
      return "its head_dims must be static";
  } else if (auto rotary = dyn_cast<RotaryOp>(op)) {
    if (dynamic(rotary.getInput(), 2))
      return "its head_dim must be static";
  }
  return "";
}

namespace mlir::tx::detail {
void populateComputePatterns(RewritePatternSet &patterns, bool rows) {
  patterns.add<LinearLowering, AttentionLowering>(patterns.getContext());
  patterns.add<RMSNormLowering, AddRMSNormLowering, RotaryLowering>(
      patterns.getContext(), rows);
}
} // namespace mlir::tx::detail
