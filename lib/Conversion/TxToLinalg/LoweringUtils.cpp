//===- LoweringUtils.cpp - helpers shared by the tx-to-linalg patterns ----===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

Value tx::detail::allocLike(OpBuilder &b, Location loc, MemRefType type,
                            Value shapeSource) {
  SmallVector<Value> dynSizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      dynSizes.push_back(memref::DimOp::create(b, loc, shapeSource, i));
  return memref::AllocOp::create(b, loc, type, dynSizes);
}

Value tx::detail::allocRowStatistic(OpBuilder &b, Location loc, Value x) {
  auto xType = cast<MemRefType>(x.getType());
  return allocLike(
      b, loc,
      MemRefType::get(xType.getShape().drop_back(), b.getF32Type()), x);
}

Type tx::detail::computeType(Type type) {
  if (auto vt = dyn_cast<VectorType>(type))
    return vt.clone(computeType(vt.getElementType()));
  auto ft = cast<FloatType>(type);
  return ft.getWidth() >= 32 ? type : Float32Type::get(type.getContext());
}

Value tx::detail::toCompute(OpBuilder &b, Location loc, Value v) {
  Type type = computeType(v.getType());
  if (type == v.getType())
    return v;
  return arith::ExtFOp::create(b, loc, type, v);
}

Value tx::detail::fromCompute(OpBuilder &b, Location loc, Value v,
                              Type elemType) {
  // `elemType` may be the scalar element type of a vector `v`.
  Type type = elemType;
  if (auto vt = dyn_cast<VectorType>(v.getType()); vt && !isa<VectorType>(type))
    type = vt.clone(elemType);
  if (v.getType() == type)
    return v;
  return arith::TruncFOp::create(b, loc, type, v);
}

Value tx::detail::floatConst(OpBuilder &b, Location loc, Type type,
                             double value) {
  if (auto vt = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, vt,
        DenseElementsAttr::get(vt, b.getFloatAttr(vt.getElementType(), value)));
  return arith::ConstantOp::create(b, loc, type,
                                   b.getFloatAttr(type, value));
}

Value tx::detail::softcapScore(OpBuilder &b, Location loc, Value score,
                               double cap) {
  Value c = floatConst(b, loc, score.getType(), cap);
  return arith::MulFOp::create(
      b, loc, c,
      math::TanhOp::create(b, loc, arith::DivFOp::create(b, loc, score, c)));
}

AffineMap tx::detail::suffixMap(MLIRContext *ctx, unsigned rank, unsigned r) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = rank - r; i < rank; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

void tx::detail::buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Value output,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = cast<MemRefType>(output.getType()).getRank();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    auto mt = dyn_cast<MemRefType>(in.getType());
    maps.push_back(suffixMap(ctx, rank, mt ? mt.getRank() : 0));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, inputs, ValueRange{output}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
}

Value tx::detail::sliceLastDim(OpBuilder &b, Location loc, Value v,
                               int64_t offset, int64_t size,
                               int64_t stride) {
  auto mt = cast<MemRefType>(v.getType());
  int64_t rank = mt.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = memref::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets.back() = b.getIndexAttr(offset);
  sizes.back() = b.getIndexAttr(size);
  strides.back() = b.getIndexAttr(stride);
  return memref::SubViewOp::create(b, loc, v, offsets, sizes, strides);
}
