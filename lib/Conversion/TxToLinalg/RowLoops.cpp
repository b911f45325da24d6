//===- RowLoops.cpp - ops over a static last dimension as parallel rows ---===//
//
// tx-to-linalg{row-loops} (what tx-to-cpu uses): elementwise ops, norms and
// rotary write buffers whose leading (token) dimensions are usually dynamic.
// As linalg ops over such a buffer they stay dynamic, so the CPU pipeline
// runs them as scalar loops on one thread. As rows they are an scf.parallel
// over the leading dimensions (async tasks with tx-to-cpu{threads=N}) and,
// in each row, vectors of static width over the last dimension. Every row
// is computed by the same code whatever the thread count (the reductions of
// a norm in a fixed order within the row), so results do not depend on it.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

bool tx::detail::hasStaticRows(Type output) {
  auto type = dyn_cast<MemRefType>(output);
  // A static shape vectorises as linalg already (tx-cpu-tile-and-vectorize).
  return type && type.getRank() >= 2 && !type.hasStaticShape() &&
         !type.isDynamicDim(type.getRank() - 1) && type.getShape().back() > 0;
}

void tx::detail::buildParallelRows(
    OpBuilder &b, Location loc, Value shapeSource, unsigned count,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  if (count == 0) {
    body(b, loc, ValueRange{});
    return;
  }
  SmallVector<Value> lbs, ubs, steps;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  for (unsigned i = 0; i < count; ++i) {
    lbs.push_back(c0);
    ubs.push_back(memref::DimOp::create(b, loc, shapeSource, i));
    steps.push_back(c1);
  }
  scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                          [&](OpBuilder &nb, Location nl, ValueRange ivs) {
                            body(nb, nl, ivs);
                            // The builder adds the terminator.
                          });
}

void tx::detail::forEachChunk(
    OpBuilder &b, Location loc, int64_t length,
    function_ref<void(OpBuilder &, Location, Value, int64_t)> body) {
  int64_t full = length / kRowChunk * kRowChunk;
  if (full > 0) {
    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, full);
    Value step = arith::ConstantIndexOp::create(b, loc, kRowChunk);
    scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &nb, Location nl, Value iv, ValueRange) {
                         body(nb, nl, iv, kRowChunk);
                         scf::YieldOp::create(nb, nl);
                       });
  }
  if (length > full)
    body(b, loc, arith::ConstantIndexOp::create(b, loc, full), length - full);
}

/// Whether the last dimension of `buffer` has unit stride (a vector.load
/// and vector.store apply).
static bool unitLastStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

Value tx::detail::loadChunk(OpBuilder &b, Location loc, Value buffer,
                            ValueRange lead, Value offset, int64_t width) {
  auto type = cast<MemRefType>(buffer.getType());
  auto vecType = VectorType::get({width}, type.getElementType());
  SmallVector<Value> idx(lead);
  idx.push_back(offset);
  if (unitLastStride(type))
    return vector::LoadOp::create(b, loc, vecType, buffer, idx);
  Value pad = floatConst(b, loc, type.getElementType(), 0);
  return vector::TransferReadOp::create(b, loc, vecType, buffer, idx, pad,
                                        ArrayRef<bool>{true});
}

void tx::detail::storeChunk(OpBuilder &b, Location loc, Value value,
                            Value buffer, ValueRange lead, Value offset) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> idx(lead);
  idx.push_back(offset);
  if (unitLastStride(type))
    vector::StoreOp::create(b, loc, value, buffer, idx);
  else
    vector::TransferWriteOp::create(b, loc, value, buffer, idx,
                                    ArrayRef<bool>{true});
}

Value tx::detail::treeSum(OpBuilder &b, Location loc, Value v) {
  auto type = cast<VectorType>(v.getType());
  int64_t width = type.getDimSize(0);
  while (width > 1 && width % 2 == 0) {
    int64_t half = width / 2;
    Value lo =
        vector::ExtractStridedSliceOp::create(b, loc, v, {0}, {half}, {1});
    Value hi =
        vector::ExtractStridedSliceOp::create(b, loc, v, {half}, {half}, {1});
    v = arith::AddFOp::create(b, loc, lo, hi);
    width = half;
  }
  if (width == 1)
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{0});
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, v);
}

Value tx::detail::rowAccumulate(
    OpBuilder &b, Location loc, int64_t length,
    function_ref<Value(OpBuilder &, Location, Value, int64_t, Value)> step) {
  Type f32 = b.getF32Type();
  int64_t full = length / kRowChunk * kRowChunk;
  Value total = floatConst(b, loc, f32, 0);
  if (full > 0) {
    Value zero = floatConst(b, loc, VectorType::get({kRowChunk}, f32), 0);
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, full),
        arith::ConstantIndexOp::create(b, loc, kRowChunk), ValueRange{zero},
        [&](OpBuilder &nb, Location nl, Value iv, ValueRange iters) {
          scf::YieldOp::create(
              nb, nl, ValueRange{step(nb, nl, iv, kRowChunk, iters[0])});
        });
    total = treeSum(b, loc, loop.getResult(0));
  }
  if (length > full) {
    Value zero = floatConst(b, loc, VectorType::get({length - full}, f32), 0);
    Value rest = step(b, loc, arith::ConstantIndexOp::create(b, loc, full),
                      length - full, zero);
    total = arith::AddFOp::create(b, loc, total, treeSum(b, loc, rest));
  }
  return total;
}

void tx::detail::buildRowwise(
    OpBuilder &b, Location loc, ValueRange inputs, Value output,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto outType = cast<MemRefType>(output.getType());
  int64_t rank = outType.getRank();
  int64_t length = outType.getShape().back();
  buildParallelRows(
      b, loc, output, rank - 1,
      [&](OpBuilder &rb, Location rl, ValueRange ivs) {
        forEachChunk(
            rb, rl, length,
            [&](OpBuilder &cb, Location cl, Value offset, int64_t width) {
              SmallVector<Value> args;
              for (Value in : inputs) {
                auto mt = dyn_cast<MemRefType>(in.getType());
                if (!mt) {
                  // A scalar operand, the same in every lane.
                  args.push_back(vector::BroadcastOp::create(
                      cb, cl, VectorType::get({width}, in.getType()), in));
                  continue;
                }
                // Broadcast over leading dimensions: the input's
                // are the row's last ones.
                ValueRange lead =
                    ivs.take_back(std::max<int64_t>(mt.getRank() - 1, 0));
                if (mt.getRank() == 0) {
                  Value s = memref::LoadOp::create(cb, cl, in);
                  args.push_back(vector::BroadcastOp::create(
                      cb, cl, VectorType::get({width}, mt.getElementType()),
                      s));
                  continue;
                }
                args.push_back(loadChunk(cb, cl, in, lead, offset, width));
              }
              storeChunk(cb, cl, body(cb, cl, args), output, ivs, offset);
            });
      });
}

void tx::detail::buildMap(
    OpBuilder &b, Location loc, ValueRange inputs, Value output, bool rows,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  if (rows && hasStaticRows(output.getType()))
    buildRowwise(b, loc, inputs, output, body);
  else
    buildElementwise(b, loc, inputs, output, body);
}

void tx::detail::buildCopy(OpBuilder &b, Location loc, Value source,
                           Value target, bool rows) {
  if (rows && hasStaticRows(target.getType())) {
    buildRowwise(b, loc, source, target,
                 [](OpBuilder &, Location, ValueRange chunk) {
                   return chunk[0];
                 });
    return;
  }
  linalg::CopyOp::create(b, loc, source, target);
}
