//===- FewTokenGemm.cpp - GEMMs of a few token rows, vectorised along K ---===//
//
// y += x W^T for a call with few token rows (decode, short prompts), W
// `[N, K]` as a checkpoint stores it. The register tiles of the direct GEMM
// (M x N x K outer products) read W column by column, which on a `[N, K]`
// weight is a transpose of every tile, and with few rows the transposes are
// most of the work (55-60 GF/s at 16 tokens). Both operands' rows are
// contiguous along K, so this kernel vectorises along K instead: per tile of
// `rows` x `cols` outputs, one vector accumulator per output, each step of
// `lanes` K elements one load per token row and per weight row and one FMA
// per output; after the K loop, each accumulator is summed by halves (a
// fixed tree) and added to the output. Every output's sum is in the same
// order whatever N, the thread count or the tile's place, so fused and
// unfused GEMMs (which differ in N only) stay bit-identical; the order
// differs from the packed GEMM's (many tokens), which is chosen by the
// token count alone.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Codegen/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {

/// Whether the innermost dimension of `type` has unit stride (its rows are
/// contiguous, so a vector.load reads `lanes` neighbours).
bool contiguousRows(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() == 2 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The bytes [lo, hi) that the elements of `v` span (lo == hi: none).
std::pair<Value, Value> byteRange(OpBuilder &b, Location loc, Value v) {
  auto type = cast<MemRefType>(v.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  auto cst = [&](int64_t c) {
    return arith::ConstantIndexOp::create(b, loc, c).getResult();
  };
  Value zero = cst(0), one = cst(1);
  // Element offsets of the first and the last element: the offset plus,
  // per dimension, (size - 1) * stride on the side of its sign.
  Value first = meta.getOffset(), last = meta.getOffset();
  Value empty = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (auto [size, stride] : llvm::zip(meta.getSizes(), meta.getStrides())) {
    empty = arith::OrIOp::create(
        b, loc, empty,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, zero));
    Value step = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, size, one), stride);
    first = arith::AddIOp::create(b, loc, first,
                                  arith::MinSIOp::create(b, loc, step, zero));
    last = arith::AddIOp::create(b, loc, last,
                                 arith::MaxSIOp::create(b, loc, step, zero));
  }
  Value bytes = cst(type.getElementTypeBitWidth() / 8);
  Value lo = arith::AddIOp::create(b, loc, base,
                                   arith::MulIOp::create(b, loc, first, bytes));
  Value hi = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, last, one),
                            bytes));
  hi = arith::SelectOp::create(b, loc, empty, lo, hi);
  return {lo, hi};
}

/// Whether the memory of `a` and `c` is disjoint, at run time.
Value disjointAtRunTime(OpBuilder &b, Location loc, Value a, Value c) {
  auto [aLo, aHi] = byteRange(b, loc, a);
  auto [cLo, cHi] = byteRange(b, loc, c);
  auto le = [&](Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, l, r);
  };
  return arith::OrIOp::create(b, loc, le(aHi, cLo), le(cHi, aLo));
}

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, Value x, Value w, Value y,
                const tx::FewTokenTile &tile)
      : b(b), loc(loc), x(x), w(w), y(y), tile(tile),
        acc(VectorType::get({tile.lanes}, b.getF32Type())) {}

  /// The loops over the output tiles: N in tiles of `cols` (the rest one
  /// column at a time), inside them the token rows in tiles of `rows` (the
  /// rest one row at a time).
  void build() {
    int64_t n = cast<MemRefType>(w.getType()).getDimSize(0);
    int64_t nMain = n - n % tile.cols;
    Value rows = memref::DimOp::create(b, loc, x, 0);
    Value rowTile = index(tile.rows);
    Value mMain = arith::SubIOp::create(
        b, loc, rows, arith::RemUIOp::create(b, loc, rows, rowTile));
    auto overRows = [&](int64_t cols, Value n0) {
      loop(index(0), mMain, tile.rows,
           [&](Value m0) { outputTile(m0, n0, tile.rows, cols); });
      loop(mMain, rows, 1, [&](Value m0) { outputTile(m0, n0, 1, cols); });
    };
    if (nMain > 0)
      loop(index(0), index(nMain), tile.cols,
           [&](Value n0) { overRows(tile.cols, n0); });
    if (nMain < n)
      loop(index(nMain), index(n), 1, [&](Value n0) { overRows(1, n0); });
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  void loop(Value lb, Value ub, int64_t step, function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, lb, ub, index(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    body(forOp.getInductionVar());
  }

  Value offset(Value base, int64_t i) {
    return i == 0 ? base : arith::AddIOp::create(b, loc, base, index(i));
  }

  /// `lanes` elements of row `row` of `buffer` from column `k0`, as f32.
  Value loadRow(OpBuilder &nb, Value buffer, Value row, Value k0) {
    Type elem = cast<MemRefType>(buffer.getType()).getElementType();
    Value v = vector::LoadOp::create(
        nb, loc, VectorType::get({tile.lanes}, elem), buffer,
        ValueRange{row, k0});
    if (elem != acc.getElementType())
      v = arith::ExtFOp::create(nb, loc, acc, v);
    return v;
  }

  /// The sum of the lanes of `v`: halves added until one lane is left.
  Value sumLanes(Value v) {
    for (int64_t width = tile.lanes / 2; width >= 1; width /= 2) {
      Value lo = vector::ExtractStridedSliceOp::create(
          b, loc, v, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{width},
          ArrayRef<int64_t>{1});
      Value hi = vector::ExtractStridedSliceOp::create(
          b, loc, v, ArrayRef<int64_t>{width}, ArrayRef<int64_t>{width},
          ArrayRef<int64_t>{1});
      v = arith::AddFOp::create(b, loc, lo, hi);
    }
    return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{0});
  }

  /// Outputs [m0, m0 + rows) x [n0, n0 + cols): the K loop carrying one
  /// accumulator each, then each accumulator's sum added to its output.
  void outputTile(Value m0, Value n0, int64_t rows, int64_t cols) {
    int64_t k = cast<MemRefType>(w.getType()).getDimSize(1);
    Value zero = arith::ConstantOp::create(
        b, loc, acc, DenseElementsAttr::get(acc, b.getF32FloatAttr(0)));
    SmallVector<Value> inits(rows * cols, zero);
    SmallVector<Value> xRows, wRows;
    for (int64_t i = 0; i < rows; ++i)
      xRows.push_back(offset(m0, i));
    for (int64_t j = 0; j < cols; ++j)
      wRows.push_back(offset(n0, j));
    auto kLoop = scf::ForOp::create(
        b, loc, index(0), index(k), index(tile.lanes), inits,
        [&](OpBuilder &nb, Location, Value k0, ValueRange sums) {
          SmallVector<Value> ws;
          for (Value row : wRows)
            ws.push_back(loadRow(nb, w, row, k0));
          SmallVector<Value> next;
          for (int64_t i = 0; i < rows; ++i) {
            Value xs = loadRow(nb, x, xRows[i], k0);
            for (int64_t j = 0; j < cols; ++j)
              next.push_back(vector::FMAOp::create(nb, loc, xs, ws[j],
                                                   sums[i * cols + j]));
          }
          scf::YieldOp::create(nb, loc, next);
        });
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        SmallVector<Value, 2> at{xRows[i], wRows[j]};
        Value old = memref::LoadOp::create(b, loc, y, at);
        Value sum = arith::AddFOp::create(
            b, loc, old, sumLanes(kLoop.getResult(i * cols + j)));
        memref::StoreOp::create(b, loc, sum, y, at);
      }
  }

  OpBuilder &b;
  Location loc;
  Value x, w, y;
  const tx::FewTokenTile &tile;
  VectorType acc;
};

} // namespace

bool tx::isTransposedB(linalg::MatmulOp mm) {
  MLIRContext *ctx = mm.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> want = AffineMap::inferFromExprList(
      ArrayRef<ArrayRef<AffineExpr>>{{m, k}, {n, k}, {m, n}}, ctx);
  return mm.getIndexingMapsArray() == ArrayRef<AffineMap>(want);
}

bool tx::lowerFewTokenGemm(linalg::MatmulOp mm, const FewTokenTile &tile,
                           TxAliasAnalysis &aa) {
  if (!isTransposedB(mm) || !mm.hasPureBufferSemantics() || tile.rows <= 0 ||
      tile.cols <= 0 || tile.lanes <= 0 || !llvm::isPowerOf2_64(tile.lanes))
    return false;
  Value x = mm.getDpsInputs()[0], w = mm.getDpsInputs()[1];
  Value y = mm.getDpsInits()[0];
  auto xType = dyn_cast<MemRefType>(x.getType());
  auto wType = dyn_cast<MemRefType>(w.getType());
  auto yType = dyn_cast<MemRefType>(y.getType());
  if (!xType || !wType || !yType || !wType.hasStaticShape() ||
      !contiguousRows(xType) || !contiguousRows(wType) ||
      wType.getDimSize(1) % tile.lanes != 0)
    return false;
  // f32 sums of f32 operands, or of 16-bit ones widened (as the matmul's
  // body widens them).
  Type elem = xType.getElementType();
  if (!yType.getElementType().isF32() || wType.getElementType() != elem ||
      !(elem.isF32() || elem.isBF16() || elem.isF16()))
    return false;
  // The outputs are read and written once, after all of the tile's reads
  // of the operands: only sound when they share no memory. Where
  // AliasAnalysis cannot prove that, the buffers' address ranges decide at
  // run time, `mm` kept for the case that they overlap: so the kernel runs
  // whenever the memory is disjoint, whatever the analysis could see (a
  // fused and an unfused GEMM, an outlined and an inlined layer, sum alike).
  Location loc = mm.getLoc();
  OpBuilder b(mm);
  Value disjoint;
  for (Value operand : {x, w}) {
    if (aa.alias(y, operand).isNo())
      continue;
    Value apart = disjointAtRunTime(b, loc, y, operand);
    disjoint = disjoint ? arith::AndIOp::create(b, loc, disjoint, apart)
                        : apart;
  }
  if (!disjoint) {
    KernelBuilder(b, loc, x, w, y, tile).build();
    mm->erase();
    return true;
  }
  auto branch = scf::IfOp::create(b, loc, disjoint, /*withElseRegion=*/true);
  b.setInsertionPointToStart(branch.thenBlock());
  KernelBuilder(b, loc, x, w, y, tile).build();
  mm->moveBefore(branch.elseBlock()->getTerminator());
  return true;
}
