//===- TileContractions.cpp - GEMMs to shared-memory tiled kernels --------===//
//
// The generic parallel-loop path maps one output element to one thread and
// reads A and B straight from global memory for every multiply: fine for
// elementwise ops, a waste of bandwidth for GEMMs. This pass builds the
// classic tiled kernel for every linalg contraction instead: a block owns a
// BM x BN output tile, stages BK-deep slices of A and B in shared memory, and
// each thread accumulates an RM x RN register tile from them.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/GPUPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUTILECONTRACTIONS
#define GEN_PASS_DEF_TXGPUTILECONTRACTIONS
#include "GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct GemmTiling {
  int64_t bm = 64, bn = 64, bk = 16, rm = 4, rn = 4;
  int64_t threadsM() const { return bm / rm; }
  int64_t threadsN() const { return bn / rn; }
  int64_t threads() const { return threadsM() * threadsN(); }
};

/// The loop dimensions of a contraction this pass handles.
struct GemmDims {
  std::optional<unsigned> batch;
  unsigned m, n, k;
};

/// The dimensions of `op` when it is a contraction this kernel generator
/// handles; other ops take the generic parallel-loop path.
FailureOr<GemmDims> matchGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1 ||
      op.getNumLoops() != 3 + dims->batch.size())
    return failure();
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return failure();
  for (Value operand : op->getOperands())
    if (!getElementTypeOrSelf(operand.getType()).isIntOrFloat())
      return failure();
  GemmDims result{std::nullopt, dims->m[0], dims->n[0], dims->k[0]};
  if (!dims->batch.empty())
    result.batch = dims->batch[0];
  return result;
}

/// Builds the kernel that replaces one contraction.
class GemmKernelBuilder {
public:
  GemmKernelBuilder(linalg::LinalgOp op, GemmDims dims, GemmTiling tiling,
                    RewriterBase &rewriter)
      : op(op), dims(dims), t(tiling), b(rewriter), loc(op.getLoc()) {}

  void build();

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value zeroOf(Type type) {
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
  }

  /// Indices into `operand` for the loop point `loopValues` (one value per
  /// loop dimension, null where the operand does not depend on it).
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> loopValues) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
      indices.push_back(loopValues[map.getDimPosition(i)]);
    return indices;
  }

  /// `if (inBounds) load operand[loopValues] else 0`.
  Value guardedLoad(OpOperand &operand, Value inBounds,
                    ArrayRef<Value> loopValues) {
    Type elementType = getElementTypeOrSelf(operand.get().getType());
    auto ifOp = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &nb, Location l) {
          Value v = memref::LoadOp::create(nb, l, operand.get(),
                                           indicesOf(operand, loopValues));
          scf::YieldOp::create(nb, l, v);
        },
        [&](OpBuilder &nb, Location l) {
          Value z = arith::ConstantOp::create(
              nb, l, cast<TypedAttr>(nb.getZeroAttr(elementType)));
          scf::YieldOp::create(nb, l, z);
        });
    return ifOp.getResult(0);
  }

  /// Copies the tile of `operand` (rows along loop dim `rowDim`, `tileRows`
  /// of them from `rowBase`, bounded by `rowSize`; the K slice from `k0`)
  /// into `shared[kk][row]`. Consecutive threads take consecutive elements
  /// of whichever of the two dimensions is innermost in the operand, so the
  /// global loads coalesce.
  void stageTile(OpOperand &operand, Value shared, unsigned rowDim,
                 int64_t tileRows, Value rowBase, Value rowSize, Value k0,
                 Value kSize, Value tid, Value batchId) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool kInnermost = map.getDimPosition(map.getNumResults() - 1) == dims.k;
    int64_t perThread = tileRows * t.bk / t.threads();
    for (int64_t l = 0; l < perThread; ++l) {
      Value idx = add(tid, cst(l * t.threads()));
      int64_t inner = kInnermost ? t.bk : tileRows;
      Value outerPos = arith::DivUIOp::create(b, loc, idx, cst(inner));
      Value innerPos = arith::RemUIOp::create(b, loc, idx, cst(inner));
      Value row = kInnermost ? outerPos : innerPos;
      Value kk = kInnermost ? innerPos : outerPos;
      Value globalRow = add(rowBase, row);
      Value globalK = add(k0, kk);
      Value inBounds = arith::AndIOp::create(b, loc, lt(globalRow, rowSize),
                                             lt(globalK, kSize));
      SmallVector<Value> loopValues(op.getNumLoops());
      loopValues[rowDim] = globalRow;
      loopValues[dims.k] = globalK;
      if (dims.batch)
        loopValues[*dims.batch] = batchId;
      Value v = guardedLoad(operand, inBounds, loopValues);
      memref::StoreOp::create(b, loc, v, shared, ValueRange{kk, row});
    }
  }

  /// The contraction body applied to (a, b, acc): a clone of the op's region.
  Value applyBody(Value aValue, Value bValue, Value acc) {
    Block *body = op.getBlock();
    IRMapping mapping;
    mapping.map(body->getArgument(0), aValue);
    mapping.map(body->getArgument(1), bValue);
    mapping.map(body->getArgument(2), acc);
    for (Operation &nested : body->without_terminator()) {
      Operation *clone = b.clone(nested, mapping);
      // Let the multiply and add contract into FMAs, as every GEMM library
      // does; the order of the K accumulation is already a tiling choice.
      if (auto fastMath = dyn_cast<arith::ArithFastMathInterface>(clone)) {
        arith::FastMathFlagsAttr flags = fastMath.getFastMathFlagsAttr();
        arith::FastMathFlags value =
            flags ? flags.getValue() : arith::FastMathFlags::none;
        clone->setAttr(fastMath.getFastMathAttrName(),
                       arith::FastMathFlagsAttr::get(
                           b.getContext(),
                           value | arith::FastMathFlags::contract));
      }
    }
    return mapping.lookup(body->getTerminator()->getOperand(0));
  }

  linalg::LinalgOp op;
  GemmDims dims;
  GemmTiling t;
  RewriterBase &b;
  Location loc;
};

void GemmKernelBuilder::build() {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  OpOperand *bOperand = op.getDpsInputOperand(1);
  OpOperand *cOperand = op.getDpsInitOperand(0);
  Type aType = getElementTypeOrSelf(aOperand->get().getType());
  Type bType = getElementTypeOrSelf(bOperand->get().getType());

  // Host side: problem sizes and launch configuration.
  b.setInsertionPoint(op);
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto sizeOf = [&](unsigned d) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[d].size);
  };
  Value mSize = sizeOf(dims.m), nSize = sizeOf(dims.n), kSize = sizeOf(dims.k);
  Value batchSize = dims.batch ? sizeOf(*dims.batch) : cst(1);
  Value gridX = arith::CeilDivUIOp::create(b, loc, nSize, cst(t.bn));
  Value gridY = arith::CeilDivUIOp::create(b, loc, mSize, cst(t.bm));
  Value one = cst(1);

  Attribute workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::AddressSpace::Workgroup);
  auto aSharedType = MemRefType::get({t.bk, t.bm}, aType,
                                     MemRefLayoutAttrInterface(), workgroup);
  auto bSharedType = MemRefType::get({t.bk, t.bn}, bType,
                                     MemRefLayoutAttrInterface(), workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, batchSize, cst(t.threadsN()), cst(t.threadsM()),
      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{aSharedType, bSharedType});
  Value aShared = launch.getWorkgroupAttributions()[0];
  Value bShared = launch.getWorkgroupAttributions()[1];

  // Kernel side.
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value batchId = launch.getBlockIds().z;
  Value m0 = mul(launch.getBlockIds().y, cst(t.bm));
  Value n0 = mul(launch.getBlockIds().x, cst(t.bn));
  Value tid = add(mul(ty, cst(t.threadsN())), tx);

  // Thread (ty, tx) owns rows ty + r*TM and columns tx + c*TN of the block
  // tile: neighbouring threads write neighbouring columns.
  SmallVector<Value> rows, cols, rowOk, colOk;
  for (int64_t r = 0; r < t.rm; ++r) {
    rows.push_back(add(m0, add(ty, cst(r * t.threadsM()))));
    rowOk.push_back(lt(rows.back(), mSize));
  }
  for (int64_t c = 0; c < t.rn; ++c) {
    cols.push_back(add(n0, add(tx, cst(c * t.threadsN()))));
    colOk.push_back(lt(cols.back(), nSize));
  }
  auto outputPoint = [&](int64_t r, int64_t c) {
    SmallVector<Value> loopValues(op.getNumLoops());
    loopValues[dims.m] = rows[r];
    loopValues[dims.n] = cols[c];
    if (dims.batch)
      loopValues[*dims.batch] = batchId;
    return loopValues;
  };

  // Accumulators start from the output (linalg contractions accumulate).
  SmallVector<Value> accInit;
  for (int64_t r = 0; r < t.rm; ++r)
    for (int64_t c = 0; c < t.rn; ++c) {
      Value ok = arith::AndIOp::create(b, loc, rowOk[r], colOk[c]);
      accInit.push_back(guardedLoad(*cOperand, ok, outputPoint(r, c)));
    }

  Value kTiles = arith::CeilDivUIOp::create(b, loc, kSize, cst(t.bk));
  auto kLoop = scf::ForOp::create(b, loc, cst(0), kTiles, one, accInit);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = mul(kLoop.getInductionVar(), cst(t.bk));
    stageTile(*aOperand, aShared, dims.m, t.bm, m0, mSize, k0, kSize, tid,
              batchId);
    stageTile(*bOperand, bShared, dims.n, t.bn, n0, nSize, k0, kSize, tid,
              batchId);
    gpu::BarrierOp::create(b, loc);

    // The K slice is unrolled: BK is a compile-time constant, and straight
    // code lets the shared-memory offsets fold into the loads.
    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    for (int64_t kkConst = 0; kkConst < t.bk; ++kkConst) {
      Value kk = cst(kkConst);
      SmallVector<Value> aValues, bValues;
      for (int64_t r = 0; r < t.rm; ++r)
        aValues.push_back(memref::LoadOp::create(
            b, loc, aShared, ValueRange{kk, add(ty, cst(r * t.threadsM()))}));
      for (int64_t c = 0; c < t.rn; ++c)
        bValues.push_back(memref::LoadOp::create(
            b, loc, bShared, ValueRange{kk, add(tx, cst(c * t.threadsN()))}));
      for (int64_t r = 0; r < t.rm; ++r)
        for (int64_t c = 0; c < t.rn; ++c)
          acc[r * t.rn + c] =
              applyBody(aValues[r], bValues[c], acc[r * t.rn + c]);
    }
    // The next iteration overwrites the tiles others may still be reading.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }

  for (int64_t r = 0; r < t.rm; ++r)
    for (int64_t c = 0; c < t.rn; ++c) {
      Value ok = arith::AndIOp::create(b, loc, rowOk[r], colOk[c]);
      Value acc = kLoop.getResult(r * t.rn + c);
      scf::IfOp::create(b, loc, ok, [&](OpBuilder &nb, Location l) {
        memref::StoreOp::create(nb, l, acc, cOperand->get(),
                                indicesOf(*cOperand, outputPoint(r, c)));
        scf::YieldOp::create(nb, l);
      });
    }
  gpu::TerminatorOp::create(b, loc);
}

struct TxGPUTileContractionsPass
    : public tx::impl::TxGPUTileContractionsBase<TxGPUTileContractionsPass> {
  using Base::Base;

  LogicalResult checkTiling(GemmTiling &t) {
    ModuleOp module = getOperation();
    if (!blockTile.empty()) {
      if (blockTile.size() != 3)
        return module.emitError("tx-gpu-tile-contractions: block-tile takes "
                                "three sizes BM,BN,BK");
      t.bm = blockTile[0], t.bn = blockTile[1], t.bk = blockTile[2];
    }
    if (!threadTile.empty()) {
      if (threadTile.size() != 2)
        return module.emitError("tx-gpu-tile-contractions: thread-tile takes "
                                "two sizes RM,RN");
      t.rm = threadTile[0], t.rn = threadTile[1];
    }
    if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.rm <= 0 || t.rn <= 0 ||
        t.bm % t.rm || t.bn % t.rn)
      return module.emitError()
             << "tx-gpu-tile-contractions: tile sizes must be positive with "
                "RM dividing BM and RN dividing BN (got block "
             << t.bm << "x" << t.bn << "x" << t.bk << ", thread " << t.rm
             << "x" << t.rn << ")";
    if (t.threads() > 1024)
      return module.emitError()
             << "tx-gpu-tile-contractions: " << t.threads()
             << " threads per block exceed the CUDA limit of 1024";
    if ((t.bm * t.bk) % t.threads() || (t.bn * t.bk) % t.threads())
      return module.emitError()
             << "tx-gpu-tile-contractions: the " << t.threads()
             << " threads of a block must divide the A and B tiles ("
             << t.bm * t.bk << " and " << t.bn * t.bk << " elements)";
    return success();
  }

  void runOnOperation() override {
    GemmTiling tiling;
    if (failed(checkTiling(tiling)))
      return signalPassFailure();

    SmallVector<std::pair<linalg::LinalgOp, GemmDims>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Already inside a kernel: leave it to the device-side lowering.
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (FailureOr<GemmDims> dims = matchGemm(op); succeeded(dims))
        gemms.push_back({op, *dims});
    });

    const int64_t sharedLimit = 48 * 1024;
    IRRewriter rewriter(&getContext());
    for (auto [op, dims] : gemms) {
      auto bytes = [&](Value v) {
        return (int64_t)llvm::divideCeil(
            getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth(), 8);
      };
      int64_t shared = tiling.bk * (tiling.bm * bytes(op.getDpsInputs()[0]) +
                                    tiling.bn * bytes(op.getDpsInputs()[1]));
      if (shared > sharedLimit) {
        op.emitError() << "tx-gpu-tile-contractions: the A and B tiles need "
                       << shared << " bytes of shared memory, over the "
                       << sharedLimit << " a block gets without opt-in";
        return signalPassFailure();
      }
      GemmKernelBuilder(op, dims, tiling, rewriter).build();
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
