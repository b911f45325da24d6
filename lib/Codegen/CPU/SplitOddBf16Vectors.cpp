//===- SplitOddBf16Vectors.cpp - bf16 vectors of 8k+1 lanes in two moves ---===//
//
// tx-cpu-split-odd-bf16-vectors: a load or store of a vector of 8k+1 bf16
// lanes becomes one of its first 8k lanes and one of its last (LLVM 22's X86
// back end aborts on the whole vector with avx512bf16; see CPUPasses.td).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUSPLITODDBF16VECTORS
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// The lane count of `type` when it is a 1-D bf16 vector of 8k+1 lanes
/// (k >= 1), else 0.
int64_t oddBf16Lanes(Type type) {
  auto vec = dyn_cast<VectorType>(type);
  if (!vec || vec.getRank() != 1 || vec.isScalable() ||
      !vec.getElementType().isBF16())
    return 0;
  int64_t n = vec.getDimSize(0);
  return n > 1 && n % 8 == 1 ? n : 0;
}

/// `indices` with `delta` added to the last.
SmallVector<Value> shiftLast(OpBuilder &b, Location loc, ValueRange indices,
                             int64_t delta) {
  SmallVector<Value> shifted(indices);
  shifted.back() = arith::AddIOp::create(
      b, loc, shifted.back(), arith::ConstantIndexOp::create(b, loc, delta));
  return shifted;
}

/// The vector of `n` lanes made of `head` (n - 1 lanes) and `last` (one).
Value join(OpBuilder &b, Location loc, VectorType type, Value head,
           Value last) {
  Value whole = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  whole = vector::InsertStridedSliceOp::create(b, loc, head, whole,
                                               ArrayRef<int64_t>{0},
                                               ArrayRef<int64_t>{1});
  return vector::InsertStridedSliceOp::create(
      b, loc, last, whole, ArrayRef<int64_t>{type.getDimSize(0) - 1},
      ArrayRef<int64_t>{1});
}

/// The lanes [offset, offset + size) of `value`.
Value lanes(OpBuilder &b, Location loc, Value value, int64_t offset,
            int64_t size) {
  return vector::ExtractStridedSliceOp::create(b, loc, value, {offset}, {size},
                                               {1});
}

/// Whether a transfer is a plain 1-D move along the last memref dimension.
bool isPlainTransfer(VectorTransferOpInterface op) {
  return !op.getMask() && op.getPermutationMap().isMinorIdentity() &&
         op.isDimInBounds(0) && isa<MemRefType>(op.getShapedType());
}

struct TxCpuSplitOddBf16VectorsPass
    : tx::impl::TxCpuSplitOddBf16VectorsBase<TxCpuSplitOddBf16VectorsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<vector::LoadOp, vector::StoreOp, vector::TransferReadOp,
              vector::TransferWriteOp>(op))
        ops.push_back(op);
    });
    IRRewriter b(&getContext());
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto load = dyn_cast<vector::LoadOp>(op)) {
        int64_t n = oddBf16Lanes(load.getVectorType());
        if (!n)
          continue;
        auto type = load.getVectorType();
        auto part = [&](int64_t size, ValueRange idx) {
          return vector::LoadOp::create(
              b, loc, VectorType::get({size}, type.getElementType()),
              load.getBase(), idx);
        };
        Value head = part(n - 1, load.getIndices());
        Value last = part(1, shiftLast(b, loc, load.getIndices(), n - 1));
        b.replaceOp(load, join(b, loc, type, head, last));
      } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
        int64_t n = oddBf16Lanes(store.getVectorType());
        if (!n)
          continue;
        Value v = store.getValueToStore();
        vector::StoreOp::create(b, loc, lanes(b, loc, v, 0, n - 1),
                                store.getBase(), store.getIndices());
        vector::StoreOp::create(b, loc, lanes(b, loc, v, n - 1, 1),
                                store.getBase(),
                                shiftLast(b, loc, store.getIndices(), n - 1));
        b.eraseOp(store);
      } else if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
        int64_t n = oddBf16Lanes(read.getVectorType());
        if (!n || !isPlainTransfer(read))
          continue;
        auto type = read.getVectorType();
        auto part = [&](int64_t size, ValueRange idx) {
          return vector::TransferReadOp::create(
              b, loc, VectorType::get({size}, type.getElementType()),
              read.getBase(), idx, read.getPadding(), ArrayRef<bool>{true});
        };
        Value head = part(n - 1, read.getIndices());
        Value last = part(1, shiftLast(b, loc, read.getIndices(), n - 1));
        b.replaceOp(read, join(b, loc, type, head, last));
      } else if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
        int64_t n = oddBf16Lanes(write.getVectorType());
        if (!n || !isPlainTransfer(write) || write->getNumResults())
          continue;
        Value v = write.getVector();
        vector::TransferWriteOp::create(b, loc, lanes(b, loc, v, 0, n - 1),
                                        write.getBase(), write.getIndices(),
                                        ArrayRef<bool>{true});
        vector::TransferWriteOp::create(
            b, loc, lanes(b, loc, v, n - 1, 1), write.getBase(),
            shiftLast(b, loc, write.getIndices(), n - 1),
            ArrayRef<bool>{true});
        b.eraseOp(write);
      }
    }
  }
};
} // namespace
