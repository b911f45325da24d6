//===- MmaGemmKernel.cpp - GEMMs on tensor cores (mma.sync) ---------------===//
//
// The tensor-core kernel of tx-gpu-tile-contractions. A block of
// (BM/WM) x (BN/WN) warps owns a BM x BN output tile; each warp owns a
// WM x WN tile, i.e. (WM/16) x (WN/8) mma.sync fragments of 16x8 f32
// accumulators held in registers across the whole K loop. Per BK-deep slice:
//
//  1. the block stages A as [BM][BK+pad] and B as [BN][BK+pad] in shared
//     memory (K contiguous, as both fragments want it; the padding shifts
//     consecutive rows by 4 banks so that ldmatrix reads are conflict-free),
//     with cooperative, coalesced, bounds-checked loads (zero outside):
//     16-byte vector loads and stores where the operand's layout and base
//     alignment allow (K-contiguous rows, K and strides multiples of 16
//     bytes; the base is tested once per kernel), element by element
//     otherwise;
//  2. per 16-deep (TF32: 8-deep) step, each warp loads its A fragments
//     (ldmatrix.x4: four 8x8 matrices, rows 0-7/8-15 x k 0-7/8-15) and B
//     fragments (ldmatrix.x2 of the [n][k] tile, which is B "col" major) and
//     issues one mma.sync per (16-row, 8-column) pair.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16" and
// "mma.m16n8k8" for .tf32), with g = lane / 4 and t = lane % 4:
//  * A 16x16 (16-bit): reg i of ldmatrix.x4 = elements (g + 8*(i%2),
//    2t + 8*(i/2) + {0,1}), because lane l addresses row l%16, column
//    8*(l/16) of the tile;
//  * B 16x8 (16-bit): reg i of ldmatrix.x2 = elements (k = 2t + 8i + {0,1},
//    n = g), lane l addressing n = l%8, k = 8*((l/8)%2);
//  * A 16x8 (tf32): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
//    B 8x8 (tf32): b0 (k=t, n=g), b1 (k=t+4, n=g) -- scalar shared loads;
//  * C/D 16x8 (f32): c0,c1 (g, 2t+{0,1}), c2,c3 (g+8, 2t+{0,1}).
//
// The accumulators start from the output (linalg contractions accumulate)
// and are stored back with per-element bounds checks, so any M, N, K work;
// under split-K they start from zero and are added into the output with
// atomics (KernelBuilderBase::SplitK).
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace mlir::tx::gpu_gemm {

bool isMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3)
    return false;
  auto strip = [](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return v;
  };
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body->getArgument(2);
  Value product = !add                  ? Value()
                  : add.getLhs() == acc ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mulOp = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mulOp)
    return false;
  // Nothing but the (optional) widening of each operand, the multiply and
  // the add.
  unsigned widenings = (mulOp.getLhs() != strip(mulOp.getLhs())) +
                       (mulOp.getRhs() != strip(mulOp.getRhs()));
  if (body->getOperations().size() != 3 + widenings)
    return false;
  Value lhs = strip(mulOp.getLhs()), rhs = strip(mulOp.getRhs());
  return (lhs == body->getArgument(0) && rhs == body->getArgument(1)) ||
         (lhs == body->getArgument(1) && rhs == body->getArgument(0));
}

std::optional<MmaKind> matchMma(linalg::LinalgOp op, bool allowTF32,
                                std::string &why) {
  Type aType = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type bType = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type cType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  std::optional<MmaKind> kind;
  if (aType != bType)
    why = "A and B element types differ";
  else if (!cType.isF32())
    why = "the accumulator is not f32";
  else if (aType.isF16())
    kind = MmaKind::F16;
  else if (aType.isBF16())
    kind = MmaKind::BF16;
  else if (aType.isF32() && allowTF32)
    kind = MmaKind::TF32;
  else if (aType.isF32())
    why = "f32 operands; mma=tf32 allows TF32 tensor cores";
  else
    why = "no tensor-core instruction for these element types";
  if (!kind)
    return std::nullopt;

  if (!isMultiplyAccumulate(op)) {
    why = "the body is not a plain multiply-accumulate";
    return std::nullopt;
  }
  return kind;
}

namespace {

class MmaKernelBuilder : public KernelBuilderBase {
public:
  MmaKernelBuilder(linalg::LinalgOp op, GemmDims dims, MmaKind kind,
                   MmaTiling tiling, int64_t splitKBlocks,
                   RewriterBase &rewriter)
      : KernelBuilderBase(op, dims, rewriter), kind(kind), t(tiling),
        splitKBlocks(splitKBlocks) {}

  void build();

private:
  bool isTF32() const { return kind == MmaKind::TF32; }
  int64_t kStep() const { return isTF32() ? 8 : 16; }

  /// The element type of the shared tiles: the operands' 16-bit type, or
  /// i32 holding tf32 bit patterns (converted once, at staging).
  Type sharedElementType() {
    switch (kind) {
    case MmaKind::F16:
      return b.getF16Type();
    case MmaKind::BF16:
      return b.getBF16Type();
    case MmaKind::TF32:
      return b.getI32Type();
    }
    llvm_unreachable("unknown mma kind");
  }

  /// mma.sync operand registers from an ldmatrix result: f16 pairs stay
  /// vector<2xf16>; bf16 pairs are passed as the i32 NVVM expects.
  SmallVector<Value> registersOf(Value fragment, int64_t count) {
    SmallVector<Value> regs;
    for (int64_t i = 0; i < count; ++i) {
      Value pair = vector::ExtractOp::create(b, loc, fragment, i);
      if (kind == MmaKind::BF16) {
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), pair);
        pair = vector::ExtractOp::create(b, loc, word, 0);
      }
      regs.push_back(pair);
    }
    return regs;
  }

  /// The A registers of the 16-row fragment at (row0, k0) of the A tile.
  SmallVector<Value> loadA(Value shared, Value row0, Value k0) {
    if (isTF32()) {
      Value r0 = add(row0, g), r1 = add(r0, cst(8));
      Value c0 = add(k0, t4), c1 = add(c0, cst(4));
      return {load(shared, r0, c0), load(shared, r1, c0), load(shared, r0, c1),
              load(shared, r1, c1)};
    }
    auto type = VectorType::get({4, 2}, sharedElementType());
    Value fragment = nvgpu::LdMatrixOp::create(
        b, loc, type, shared,
        ValueRange{add(row0, rem(lane, 16)),
                   add(k0, mul(div(lane, 16), cst(8)))},
        /*transpose=*/false, /*numTiles=*/4);
    return registersOf(fragment, 4);
  }

  /// The B registers of the 8-column fragment at (col0, k0) of the [n][k]
  /// B tile.
  SmallVector<Value> loadB(Value shared, Value col0, Value k0) {
    if (isTF32()) {
      Value n = add(col0, g), c0 = add(k0, t4);
      return {load(shared, n, c0), load(shared, n, add(c0, cst(4)))};
    }
    auto type = VectorType::get({2, 2}, sharedElementType());
    Value fragment = nvgpu::LdMatrixOp::create(
        b, loc, type, shared,
        ValueRange{add(col0, rem(lane, 8)),
                   add(k0, mul(rem(div(lane, 8), 2), cst(8)))},
        /*transpose=*/false, /*numTiles=*/2);
    return registersOf(fragment, 2);
  }

  Value load(Value shared, Value row, Value col) {
    return memref::LoadOp::create(b, loc, shared, ValueRange{row, col});
  }

  /// One mma.sync: d = a * b + c on four f32 accumulators.
  SmallVector<Value> mma(ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
                         ArrayRef<Value> acc) {
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    NVVM::MMATypes ptxType = kind == MmaKind::F16    ? NVVM::MMATypes::f16
                             : kind == MmaKind::BF16 ? NVVM::MMATypes::bf16
                                                     : NVVM::MMATypes::tf32;
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, aRegs, bRegs, acc, {16, 8, kStep()},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> result;
    for (int64_t i = 0; i < 4; ++i)
      result.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return result;
  }

  /// Elements of `operand` one 16-byte load covers, when its tiles can be
  /// staged with such loads: K is the innermost memref dimension (unit
  /// stride) and static, and K, every other stride and the offset are
  /// multiples of that width, so every vector of a K slice starts 16-byte
  /// aligned relative to the base. 0 otherwise. (The base itself is checked
  /// at run time: see `baseAligned`.)
  int64_t vectorWidth(OpOperand &operand) {
    auto type = cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t rank = type.getRank();
    int64_t width = 128 / type.getElementTypeBitWidth();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (map.getDimPosition(rank - 1) != dims.k ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || ShapedType::isDynamic(offset) ||
        offset % width || ShapedType::isDynamic(type.getShape().back()) ||
        type.getShape().back() % width || t.bk % width)
      return 0;
    for (int64_t stride : ArrayRef(strides).drop_back())
      if (ShapedType::isDynamic(stride) || stride % width)
        return 0;
    return width;
  }

  /// Whether the base of `memref` is 16-byte aligned (a caller may pass any
  /// view; allocations from the driver and malloc are).
  Value baseAligned(Value memref) {
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 rem(base, 16), cst(0));
  }

  /// stageTile with 16-byte loads and stores: each thread copies
  /// `width`-element vectors of K-contiguous rows into the [row][k] tile.
  /// K is a multiple of the width, so a vector is all in or all out of
  /// bounds.
  void stageTileVectors(OpOperand &operand, Value shared, unsigned rowDim,
                        int64_t tileRows, int64_t width, Value rowBase,
                        Value rowSize, Value k0, Value kSize, Value tid,
                        Value batchId, function_ref<Value(Value)> convert) {
    Type elementType = getElementTypeOrSelf(operand.get().getType());
    auto vectorType = VectorType::get({width}, elementType);
    int64_t vectorsPerRow = t.bk / width;
    int64_t perThread = tileRows * vectorsPerRow / t.threads();
    for (int64_t l = 0; l < perThread; ++l) {
      Value idx = add(tid, cst(l * t.threads()));
      Value row = div(idx, vectorsPerRow);
      Value kk = mul(rem(idx, vectorsPerRow), cst(width));
      Value globalRow = add(rowBase, row), globalK = add(k0, kk);
      SmallVector<Value> loopValues(op.getNumLoops());
      loopValues[rowDim] = globalRow;
      loopValues[dims.k] = globalK;
      if (dims.batch)
        loopValues[*dims.batch] = batchId;
      Value v = guarded(
          both(lt(globalRow, rowSize), lt(globalK, kSize)), vectorType,
          [&](OpBuilder &nb, Location l) -> Value {
            return vector::LoadOp::create(
                nb, l, vectorType, operand.get(),
                indicesOf(operand, loopValues), /*nontemporal=*/false,
                llvm::MaybeAlign(16));
          });
      if (convert) {
        SmallVector<Value> converted;
        for (int64_t e = 0; e < width; ++e)
          converted.push_back(
              convert(vector::ExtractOp::create(b, loc, v, e)));
        v = vector::FromElementsOp::create(
            b, loc, VectorType::get({width}, converted[0].getType()),
            converted);
      }
      vector::StoreOp::create(b, loc, v, shared, ValueRange{row, kk},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
  }

  /// Stages one operand's K slice: with 16-byte vectors when the operand
  /// allows it and `aligned` holds at run time, element by element
  /// otherwise.
  void stage(OpOperand &operand, Value shared, unsigned rowDim,
             int64_t tileRows, Value rowBase, Value rowSize, Value k0,
             Value kSize, Value tid, Value batchId, Value aligned,
             function_ref<Value(Value)> convert) {
    auto scalar = [&] {
      stageTile(operand, shared, SharedLayout::RowMajor, rowDim, tileRows,
                t.bk, t.threads(), rowBase, rowSize, k0, kSize, tid, batchId,
                convert);
    };
    int64_t width = vectorWidth(operand);
    if (!width || (tileRows * t.bk / width) % t.threads()) {
      scalar();
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, aligned, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    stageTileVectors(operand, shared, rowDim, tileRows, width, rowBase,
                     rowSize, k0, kSize, tid, batchId, convert);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scalar();
  }

  MmaKind kind;
  MmaTiling t;
  int64_t splitKBlocks;
  Value lane, g, t4;
};

void MmaKernelBuilder::build() {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  OpOperand *bOperand = op.getDpsInputOperand(1);
  OpOperand *cOperand = op.getDpsInitOperand(0);

  // The shared tiles are [row][kk], each row padded by `pad` elements.
  int64_t pad = isTF32() ? 4 : 8;
  Kernel k =
      launchKernel(t.bm, t.bn, t.bk, splitKBlocks, t.threads(),
                   /*threadsY=*/1, {t.bm, t.bk + pad}, sharedElementType(),
                   {t.bn, t.bk + pad}, sharedElementType());
  Value tid = k.launch.getThreadIds().x;
  lane = rem(tid, 32);
  g = div(lane, 4);
  t4 = rem(lane, 4);
  Value warp = div(tid, 32);
  Value warpRow = mul(div(warp, t.warpsN()), cst(t.wm));
  Value warpCol = mul(rem(warp, t.warpsN()), cst(t.wn));
  int64_t fragsM = t.wm / 16, fragsN = t.wn / 8;

  // Accumulator e of fragment (i, j) is element (row(i, e), col(j, e)).
  SmallVector<Value> rows, cols, rowOk, colOk;
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t half = 0; half < 2; ++half) {
      rows.push_back(add(k.m0, add(warpRow, add(g, cst(i * 16 + half * 8)))));
      rowOk.push_back(lt(rows.back(), k.mSize));
    }
  Value twoT = mul(t4, cst(2));
  for (int64_t j = 0; j < fragsN; ++j)
    for (int64_t pair = 0; pair < 2; ++pair) {
      cols.push_back(add(k.n0, add(warpCol, add(twoT, cst(j * 8 + pair)))));
      colOk.push_back(lt(cols.back(), k.nSize));
    }
  auto element = [&](int64_t i, int64_t j, int64_t e) {
    return std::make_pair(2 * i + e / 2, 2 * j + e % 2);
  };
  SmallVector<Value> accInit;
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        auto [r, c] = element(i, j, e);
        accInit.push_back(
            initialAccumulator(k.splitK, *cOperand, both(rowOk[r], colOk[c]),
                               outputPoint(rows[r], cols[c], k.batchId)));
      }

  auto toTF32 = [&](Value v) -> Value {
    return NVVM::ConvertFloatToTF32Op::create(
        b, loc, b.getI32Type(), v,
        NVVM::FPRoundingModeAttr::get(b.getContext(),
                                      NVVM::FPRoundingMode::RNA));
  };
  // Uniform for the whole kernel: whether the 16-byte staging path applies.
  Value aAligned = baseAligned(aOperand->get());
  Value bAligned = baseAligned(bOperand->get());
  auto kLoop = scf::ForOp::create(b, loc, k.kBegin, k.kEnd, k.one, accInit);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = mul(kLoop.getInductionVar(), cst(t.bk));
    function_ref<Value(Value)> convert = nullptr;
    if (isTF32())
      convert = toTF32;
    stage(*aOperand, k.aShared, dims.m, t.bm, k.m0, k.mSize, k0, k.kSize, tid,
          k.batchId, aAligned, convert);
    stage(*bOperand, k.bShared, dims.n, t.bn, k.n0, k.nSize, k0, k.kSize, tid,
          k.batchId, bAligned, convert);
    if (t.testBreak != TestBreak::DropBarrier)
      gpu::BarrierOp::create(b, loc);

    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    for (int64_t ks = 0; ks < t.bk; ks += kStep()) {
      Value kk = cst(ks);
      SmallVector<SmallVector<Value>> aFrags, bFrags;
      for (int64_t i = 0; i < fragsM; ++i)
        aFrags.push_back(loadA(k.aShared, add(warpRow, cst(i * 16)), kk));
      for (int64_t j = 0; j < fragsN; ++j)
        bFrags.push_back(loadB(k.bShared, add(warpCol, cst(j * 8)), kk));
      for (int64_t i = 0; i < fragsM; ++i)
        for (int64_t j = 0; j < fragsN; ++j) {
          MutableArrayRef<Value> fragAcc(&acc[(i * fragsN + j) * 4], 4);
          SmallVector<Value> d = mma(aFrags[i], bFrags[j], fragAcc);
          llvm::copy(d, fragAcc.begin());
        }
    }
    // The next iteration overwrites the tiles other warps may still read.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }

  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        auto [r, c] = element(i, j, e);
        if (t.testBreak == TestBreak::FragmentOffset)
          c ^= 1; // the wrong column of the fragment
        writeAccumulator(k.splitK, kLoop.getResult((i * fragsN + j) * 4 + e),
                         *cOperand, both(rowOk[r], colOk[c]),
                         outputPoint(rows[r], cols[c], k.batchId));
      }
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void buildMmaGemm(linalg::LinalgOp op, GemmDims dims, MmaKind kind,
                  MmaTiling tiling, int64_t splitKBlocks,
                  RewriterBase &rewriter) {
  MmaKernelBuilder(op, dims, kind, tiling, splitKBlocks, rewriter).build();
}

} // namespace mlir::tx::gpu_gemm
