//===- RowAttention.cpp - attention as row loops with head_dim vectors ----===//
//
// tx-to-linalg{row-attention} (what tx-to-cpu uses): tx.attention as a
// parallel loop over query heads; inside, for each query row, the visible
// keys only (causal rows stop at their last key, windowed ones start at the
// first key of their window), each score a dot product of
// head_dim vectors, the softmax over the row and the weighted sum of value
// rows accumulated in a head_dim vector. The linalg form (ComputePatterns.cpp)
// computes and masks every score of a [heads, T, S] buffer with scalar loops
// when T is dynamic; this one does about half the work for causal attention,
// in vectors, with one row of scores per head, and its heads run on the
// async runtime with tx-to-cpu{threads=N}. Each output row is computed by
// the same code whatever the thread count.
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

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

namespace {

/// Row `indices` of `buffer` (its whole last dimension, `width`) as an f32
/// vector.
static Value loadRow(OpBuilder &b, Location loc, Value buffer,
                     ValueRange indices, int64_t width) {
  Value row = loadChunk(b, loc, buffer, indices,
                        arith::ConstantIndexOp::create(b, loc, 0), width);
  Type f32 = b.getF32Type();
  if (cast<VectorType>(row.getType()).getElementType() != f32)
    row = arith::ExtFOp::create(b, loc, VectorType::get({width}, f32), row);
  return row;
}

struct RowAttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto qType = cast<MemRefType>(op.getQuery().getType());
    auto kType = cast<MemRefType>(op.getKey().getType());
    auto vType = cast<MemRefType>(op.getValue().getType());
    int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1);
    int64_t headDim = qType.getDimSize(2), vHeadDim = vType.getDimSize(2);
    if (std::string why = dynamicHeadShape(op); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    if (headDim == 0 || vHeadDim == 0)
      return rewriter.notifyMatchFailure(op, "empty heads");
    int64_t groups = hq / hkv;
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type f32 = b.getF32Type();
    Type elemType = qType.getElementType();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();

    CheckedBuffer query = checked("query", op.getQuery(), q);
    CheckedBuffer key = checked("key", op.getKey(), k);
    CheckedBuffer value = checked("value", op.getValue(), v);
    checkAttentionShapes(b, op, query, key, value, headDim);
    auto resType = cast<MemRefType>(op.getResult().getType());

    Value out = allocLike(b, loc, resType, q);
    Value tLen = memref::DimOp::create(b, loc, q, 0);
    Value sLen = memref::DimOp::create(b, loc, k, 0);
    // One row of scores per query head.
    Value rows = memref::AllocOp::create(
        b, loc, MemRefType::get({hq, ShapedType::kDynamic}, f32),
        ValueRange{sLen});

    auto index = [&](int64_t i) {
      return arith::ConstantIndexOp::create(b, loc, i).getResult();
    };
    Value c0 = index(0), c1 = index(1);
    Value zero = floatConst(b, loc, f32, 0.0);
    Value negInf =
        floatConst(b, loc, f32, -std::numeric_limits<double>::infinity());
    Value scale = floatConst(b, loc, f32, op.getScale().convertToDouble());
    // Sums of value rows: v_head_dim vectors.
    auto vecType = VectorType::get({vHeadDim}, f32);
    Value zeroVec = arith::ConstantOp::create(
        b, loc, vecType, DenseElementsAttr::get(vecType, b.getF32FloatAttr(0)));
    // Key s is visible to query t when s <= t + (S - T), and with a window
    // W when also t + (S - T) - s < W.
    Value shift = arith::SubIOp::create(b, loc, sLen, tLen);
    bool causal = op.getCausal();
    std::optional<uint64_t> window = op.getWindow();
    std::optional<APFloat> softcap = op.getSoftcap();

    auto parallel = scf::ParallelOp::create(
        b, loc, ValueRange{c0}, ValueRange{index(hq)}, ValueRange{c1});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(parallel.getBody()->getTerminator());
    Value h = parallel.getInductionVars()[0];
    Value kh = arith::DivUIOp::create(b, loc, h, index(groups));
    auto tLoop = scf::ForOp::create(b, loc, c0, tLen, c1);
    b.setInsertionPoint(tLoop.getBody()->getTerminator());
    Value t = tLoop.getInductionVar();
    Value begin = c0, end = sLen;
    if (causal) {
      Value pos = arith::AddIOp::create(b, loc, t, shift);
      Value last = arith::AddIOp::create(b, loc, pos, c1);
      end = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, last, c0), sLen);
      // The first key of the window: pos - W + 1 (at least 0; below S as
      // pos < S). Rows store scores at their key's index, so only
      // [begin, end) of a row is written and read.
      if (window)
        begin = arith::MaxSIOp::create(
            b, loc,
            arith::SubIOp::create(b, loc, last, index(*window)), c0);
    }
    Value qRow = loadRow(b, loc, q, ValueRange{t, h}, headDim);

    // Scores of the visible keys, and their maximum.
    auto scoreLoop =
        scf::ForOp::create(b, loc, begin, end, c1, ValueRange{negInf});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(scoreLoop.getBody());
      Value s = scoreLoop.getInductionVar();
      Value kRow = loadRow(b, loc, k, ValueRange{s, kh}, headDim);
      Value dot = treeSum(b, loc, arith::MulFOp::create(b, loc, qRow, kRow));
      Value score = arith::MulFOp::create(b, loc, dot, scale);
      if (softcap)
        score = softcapScore(b, loc, score, softcap->convertToDouble());
      memref::StoreOp::create(b, loc, score, rows, ValueRange{h, s});
      Value max = arith::MaximumFOp::create(
          b, loc, scoreLoop.getRegionIterArgs()[0], score);
      scf::YieldOp::create(b, loc, ValueRange{max});
    }
    Value rowMax = scoreLoop.getResult(0);

    // p = exp(score - max); the row sum of p and sum_s p v[s].
    auto sumLoop =
        scf::ForOp::create(b, loc, begin, end, c1, ValueRange{zero, zeroVec});
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(sumLoop.getBody());
      Value s = sumLoop.getInductionVar();
      Value score = memref::LoadOp::create(b, loc, rows, ValueRange{h, s});
      Value p = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, score, rowMax));
      Value vRow = loadRow(b, loc, v, ValueRange{s, kh}, vHeadDim);
      Value pv = vector::BroadcastOp::create(b, loc, vecType, p);
      Value acc = vector::FMAOp::create(b, loc, pv, vRow,
                                        sumLoop.getRegionIterArgs()[1]);
      Value sum =
          arith::AddFOp::create(b, loc, sumLoop.getRegionIterArgs()[0], p);
      scf::YieldOp::create(b, loc, ValueRange{sum, acc});
    }
    Value sum = sumLoop.getResult(0), acc = sumLoop.getResult(1);

    // out[t, h] = acc / sum; a row with no visible key is zero.
    Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          sum, zero);
    Value r = arith::DivFOp::create(
        b, loc, acc, vector::BroadcastOp::create(b, loc, vecType, sum));
    r = arith::SelectOp::create(b, loc, isEmpty, zeroVec, r);
    if (elemType != f32)
      r = arith::TruncFOp::create(
          b, loc, VectorType::get({vHeadDim}, elemType), r);
    vector::StoreOp::create(b, loc, r, out, ValueRange{t, h, c0});

    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

namespace mlir::tx::detail {
void populateRowAttentionPatterns(RewritePatternSet &patterns) {
  // Preferred over the linalg form of ComputePatterns.cpp.
  patterns.add<RowAttentionLowering>(patterns.getContext(), /*benefit=*/2);
}
} // namespace mlir::tx::detail
