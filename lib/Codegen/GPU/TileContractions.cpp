//===- TileContractions.cpp - GEMMs to shared-memory tiled kernels --------===//
//
// The generic parallel-loop path maps one output element to one thread and
// reads A and B straight from global memory for every multiply: fine for
// elementwise ops, a waste of bandwidth for GEMMs. This pass builds a tiled
// kernel for every linalg contraction instead: a block owns a BM x BN output
// tile and stages BK-deep slices of A and B in shared memory. Where the
// element types and the chip allow, warps accumulate with tensor-core
// mma.sync (MmaGemmKernel.cpp); elsewhere each thread accumulates an RM x RN
// register tile with the op's own body (the SIMT kernel here).
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"

#include "TxDialect/Codegen/GPUTarget.h"
#include "TxDialect/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUTILECONTRACTIONS
#define GEN_PASS_DEF_TXGPUTILECONTRACTIONS
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace mlir::tx::gpu_gemm {

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

SmallVector<Value> KernelBuilderBase::indicesOf(OpOperand &operand,
                                                ArrayRef<Value> loopValues) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    indices.push_back(loopValues[map.getDimPosition(i)]);
  return indices;
}

Value KernelBuilderBase::guardedLoad(OpOperand &operand, Value inBounds,
                                     ArrayRef<Value> loopValues) {
  return guardedLoadAt(operand.get(), inBounds,
                       indicesOf(operand, loopValues));
}

Value KernelBuilderBase::guardedLoadAt(Value memref, Value inBounds,
                                       ValueRange indices) {
  return guarded(inBounds, getElementTypeOrSelf(memref.getType()),
                 [&](OpBuilder &nb, Location l) -> Value {
                   return memref::LoadOp::create(nb, l, memref, indices);
                 });
}

Value KernelBuilderBase::guarded(
    Value inBounds, Type type,
    function_ref<Value(OpBuilder &, Location)> load) {
  auto ifOp = scf::IfOp::create(
      b, loc, inBounds,
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l, load(nb, l));
      },
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l, zero(nb, l, type));
      });
  return ifOp.getResult(0);
}

void KernelBuilderBase::guardedStore(Value value, OpOperand &operand,
                                     Value inBounds,
                                     ArrayRef<Value> loopValues) {
  scf::IfOp::create(b, loc, inBounds, [&](OpBuilder &nb, Location l) {
    memref::StoreOp::create(nb, l, value, operand.get(),
                            indicesOf(operand, loopValues));
    scf::YieldOp::create(nb, l);
  });
}

Value KernelBuilderBase::planSplitK(SplitK &s, int64_t targetBlocks,
                                    Value gridX, Value gridY, Value batchSize,
                                    Value kTiles) {
  s.enabled = true;
  Value one = cst(1);
  auto maxOne = [&](Value v) { return arith::MaxUIOp::create(b, loc, v, one); };
  Value tiles = maxOne(mul(mul(gridX, gridY), batchSize));
  Value kTilesAtLeastOne = maxOne(kTiles);
  Value wanted = arith::MinUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, cst(targetBlocks), tiles),
      kTilesAtLeastOne);
  s.perSplit = arith::CeilDivUIOp::create(b, loc, kTilesAtLeastOne, wanted);
  // Recomputed so that no split is empty.
  s.splits = arith::CeilDivUIOp::create(b, loc, kTilesAtLeastOne, s.perSplit);
  return mul(batchSize, s.splits);
}

KernelBuilderBase::Launch KernelBuilderBase::planLaunch(int64_t bm, int64_t bn,
                                                      int64_t bk,
                                                      int64_t splitKBlocks) {
  Launch l;
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto sizeOf = [&](unsigned d) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[d].size);
  };
  l.mSize = sizeOf(dims.m);
  l.nSize = sizeOf(dims.n);
  l.kSize = sizeOf(dims.k);
  Value batchSize = dims.batch ? sizeOf(*dims.batch) : cst(1);
  l.gridX = arith::CeilDivUIOp::create(b, loc, l.nSize, cst(bn));
  l.gridY = arith::CeilDivUIOp::create(b, loc, l.mSize, cst(bm));
  l.kTiles = arith::CeilDivUIOp::create(b, loc, l.kSize, cst(bk));
  l.gridZ = splitKBlocks > 0 ? planSplitK(l.splitK, splitKBlocks, l.gridX,
                                          l.gridY, batchSize, l.kTiles)
                             : batchSize;
  return l;
}

void KernelBuilderBase::decodeGridZ(const SplitK &s, Value z, Value kTiles,
                                    Value &batchId, Value &kBegin,
                                    Value &kEnd) {
  if (!s.enabled) {
    batchId = z;
    kBegin = cst(0);
    kEnd = kTiles;
    return;
  }
  batchId = arith::DivUIOp::create(b, loc, z, s.splits);
  Value split = arith::RemUIOp::create(b, loc, z, s.splits);
  kBegin = mul(split, s.perSplit);
  kEnd = arith::MinUIOp::create(b, loc, add(kBegin, s.perSplit), kTiles);
}

KernelBuilderBase::Kernel KernelBuilderBase::launchKernel(
    int64_t bm, int64_t bn, int64_t bk, int64_t splitKBlocks, int64_t threadsX,
    int64_t threadsY, ArrayRef<int64_t> aTile, Type aElement,
    ArrayRef<int64_t> bTile, Type bElement) {
  Kernel k;
  // Host side: problem sizes and launch configuration.
  b.setInsertionPoint(op);
  static_cast<Launch &>(k) = planLaunch(bm, bn, bk, splitKBlocks);
  k.one = cst(1);
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto aShared =
      MemRefType::get(aTile, aElement, MemRefLayoutAttrInterface(), workgroup);
  auto bShared =
      MemRefType::get(bTile, bElement, MemRefLayoutAttrInterface(), workgroup);
  Value blockX = cst(threadsX);
  Value blockY = threadsY == 1 ? k.one : cst(threadsY);
  k.launch = gpu::LaunchOp::create(
      b, loc, k.gridX, k.gridY, k.gridZ, blockX, blockY, k.one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{aShared, bShared});
  k.aShared = k.launch.getWorkgroupAttributions()[0];
  k.bShared = k.launch.getWorkgroupAttributions()[1];

  // Kernel side.
  b.setInsertionPointToStart(&k.launch.getBody().front());
  decodeGridZ(k.splitK, k.launch.getBlockIds().z, k.kTiles, k.batchId, k.kBegin,
              k.kEnd);
  k.m0 = mul(k.launch.getBlockIds().y, cst(bm));
  k.n0 = mul(k.launch.getBlockIds().x, cst(bn));
  return k;
}

Value KernelBuilderBase::initialAccumulator(const SplitK &s, OpOperand &c,
                                            Value inBounds,
                                            ArrayRef<Value> point) {
  if (!s.enabled)
    return guardedLoad(c, inBounds, point);
  return zero(b, loc, getElementTypeOrSelf(c.get().getType()));
}

void KernelBuilderBase::writeAccumulator(const SplitK &s, Value value,
                                         OpOperand &c, Value inBounds,
                                         ArrayRef<Value> point) {
  if (!s.enabled) {
    guardedStore(value, c, inBounds, point);
    return;
  }
  scf::IfOp::create(b, loc, inBounds, [&](OpBuilder &nb, Location l) {
    memref::AtomicRMWOp::create(nb, l, arith::AtomicRMWKind::addf, value,
                                c.get(), indicesOf(c, point));
    scf::YieldOp::create(nb, l);
  });
}

Value KernelBuilderBase::steppedView(OpOperand &operand,
                                     ArrayRef<Value> start, unsigned stepDim,
                                     int64_t step, int64_t count,
                                     unsigned &viewDim) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
    unsigned loopDim = map.getDimPosition(i);
    offsets.push_back(start[loopDim]);
    bool stepped = loopDim == stepDim;
    if (stepped)
      viewDim = i;
    sizes.push_back(b.getIndexAttr(stepped ? count : 1));
    strides.push_back(b.getIndexAttr(stepped ? step : 1));
  }
  return memref::SubViewOp::create(b, loc, operand.get(), offsets, sizes,
                                   strides);
}

SmallVector<Value> KernelBuilderBase::outputPoint(Value row, Value col,
                                                  Value batchId) {
  SmallVector<Value> loopValues(op.getNumLoops());
  loopValues[dims.m] = row;
  loopValues[dims.n] = col;
  if (dims.batch)
    loopValues[*dims.batch] = batchId;
  return loopValues;
}

void KernelBuilderBase::stageTile(OpOperand &operand, Value shared,
                                  SharedLayout layout, unsigned rowDim,
                                  int64_t tileRows, int64_t tileK,
                                  int64_t threads, Value rowBase,
                                  Value rowSize, Value k0, Value kSize,
                                  Value tid, Value batchId,
                                  function_ref<Value(Value)> convert) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  bool kInnermost = map.getDimPosition(map.getNumResults() - 1) == dims.k;
  int64_t perThread = tileRows * tileK / threads;
  int64_t inner = kInnermost ? tileK : tileRows;
  // Element `tid + l * threads` of the tile, split into (outer, inner). When
  // the block spans whole inner rows the split is the same for every l up
  // to a constant outer offset: one div/rem instead of one per element.
  Value tidOuter, tidInner;
  // In that case the thread's elements are also one strided view of the
  // operand (element l = l steps along one dimension): its loads address
  // one base plus constant offsets, rather than a row address each that
  // the compiler would keep live across the K loop.
  Value view;
  unsigned viewDim = 0;
  if (threads % inner == 0) {
    tidOuter = div(tid, inner);
    tidInner = rem(tid, inner);
    SmallVector<Value> start(op.getNumLoops());
    start[rowDim] = add(rowBase, kInnermost ? tidOuter : tidInner);
    start[dims.k] = add(k0, kInnermost ? tidInner : tidOuter);
    if (dims.batch)
      start[*dims.batch] = batchId;
    for (Value &v : start)
      if (!v)
        v = cst(0);
    view = steppedView(operand, start, kInnermost ? rowDim : dims.k,
                       threads / inner, perThread, viewDim);
  }
  for (int64_t l = 0; l < perThread; ++l) {
    Value outerPos, innerPos;
    if (tidOuter) {
      outerPos = add(tidOuter, cst(l * (threads / inner)));
      innerPos = tidInner;
    } else {
      Value idx = add(tid, cst(l * threads));
      outerPos = div(idx, inner);
      innerPos = rem(idx, inner);
    }
    Value row = kInnermost ? outerPos : innerPos;
    Value kk = kInnermost ? innerPos : outerPos;
    Value globalRow = add(rowBase, row);
    Value globalK = add(k0, kk);
    Value inBounds = both(lt(globalRow, rowSize), lt(globalK, kSize));
    Value v;
    if (view) {
      SmallVector<Value> indices(
          cast<MemRefType>(view.getType()).getRank(), cst(0));
      indices[viewDim] = cst(l);
      v = guardedLoadAt(view, inBounds, indices);
    } else {
      SmallVector<Value> loopValues(op.getNumLoops());
      loopValues[rowDim] = globalRow;
      loopValues[dims.k] = globalK;
      if (dims.batch)
        loopValues[*dims.batch] = batchId;
      v = guardedLoad(operand, inBounds, loopValues);
    }
    if (convert)
      v = convert(v);
    SmallVector<Value, 2> at = layout == SharedLayout::KMajor
                                   ? SmallVector<Value, 2>{kk, row}
                                   : SmallVector<Value, 2>{row, kk};
    memref::StoreOp::create(b, loc, v, shared, at);
  }
}

namespace {

/// Builds the SIMT kernel that replaces one contraction.
class SimtKernelBuilder : public KernelBuilderBase {
public:
  SimtKernelBuilder(linalg::LinalgOp op, GemmDims dims, SimtTiling tiling,
                    int64_t splitKBlocks, RewriterBase &rewriter)
      : KernelBuilderBase(op, dims, rewriter), t(tiling),
        splitKBlocks(splitKBlocks) {}

  void build();

private:
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

  SimtTiling t;
  int64_t splitKBlocks;
};

void SimtKernelBuilder::build() {
  OpOperand *aOperand = op.getDpsInputOperand(0);
  OpOperand *bOperand = op.getDpsInputOperand(1);
  OpOperand *cOperand = op.getDpsInitOperand(0);
  Type aType = getElementTypeOrSelf(aOperand->get().getType());
  Type bType = getElementTypeOrSelf(bOperand->get().getType());

  Kernel k =
      launchKernel(t.bm, t.bn, t.bk, splitKBlocks, t.threadsN(), t.threadsM(),
                   {t.bk, t.bm}, aType, {t.bk, t.bn}, bType);
  Value tx = k.launch.getThreadIds().x, ty = k.launch.getThreadIds().y;
  Value tid = add(mul(ty, cst(t.threadsN())), tx);

  // Thread (ty, tx) owns rows ty + r*TM and columns tx + c*TN of the block
  // tile: neighbouring threads write neighbouring columns.
  SmallVector<Value> rows, cols, rowOk, colOk;
  for (int64_t r = 0; r < t.rm; ++r) {
    rows.push_back(add(k.m0, add(ty, cst(r * t.threadsM()))));
    rowOk.push_back(lt(rows.back(), k.mSize));
  }
  for (int64_t c = 0; c < t.rn; ++c) {
    cols.push_back(add(k.n0, add(tx, cst(c * t.threadsN()))));
    colOk.push_back(lt(cols.back(), k.nSize));
  }

  // Accumulators start from the output (linalg contractions accumulate).
  SmallVector<Value> accInit;
  for (int64_t r = 0; r < t.rm; ++r)
    for (int64_t c = 0; c < t.rn; ++c)
      accInit.push_back(
          initialAccumulator(k.splitK, *cOperand, both(rowOk[r], colOk[c]),
                             outputPoint(rows[r], cols[c], k.batchId)));

  auto kLoop = scf::ForOp::create(b, loc, k.kBegin, k.kEnd, k.one, accInit);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = mul(kLoop.getInductionVar(), cst(t.bk));
    stageTile(*aOperand, k.aShared, SharedLayout::KMajor, dims.m, t.bm, t.bk,
              t.threads(), k.m0, k.mSize, k0, k.kSize, tid, k.batchId);
    stageTile(*bOperand, k.bShared, SharedLayout::KMajor, dims.n, t.bn, t.bk,
              t.threads(), k.n0, k.nSize, k0, k.kSize, tid, k.batchId);
    if (t.testBreak != TestBreak::DropBarrier)
      gpu::BarrierOp::create(b, loc);

    // The K slice is unrolled: BK is a compile-time constant, and straight
    // code lets the shared-memory offsets fold into the loads.
    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    for (int64_t kkConst = 0; kkConst < t.bk; ++kkConst) {
      Value kk = cst(kkConst);
      SmallVector<Value> aValues, bValues;
      for (int64_t r = 0; r < t.rm; ++r)
        aValues.push_back(memref::LoadOp::create(
            b, loc, k.aShared, ValueRange{kk, add(ty, cst(r * t.threadsM()))}));
      for (int64_t c = 0; c < t.rn; ++c)
        bValues.push_back(memref::LoadOp::create(
            b, loc, k.bShared, ValueRange{kk, add(tx, cst(c * t.threadsN()))}));
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
    for (int64_t c = 0; c < t.rn; ++c)
      writeAccumulator(k.splitK, kLoop.getResult(r * t.rn + c), *cOperand,
                       both(rowOk[r], colOk[c]),
                       outputPoint(rows[r], cols[c], k.batchId));
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

void buildSimtGemm(linalg::LinalgOp op, GemmDims dims, SimtTiling tiling,
                   int64_t splitKBlocks, RewriterBase &rewriter) {
  SimtKernelBuilder(op, dims, tiling, splitKBlocks, rewriter).build();
}

} // namespace mlir::tx::gpu_gemm

namespace {

using namespace mlir::tx::gpu_gemm;

/// The SM version of `chip` ("sm_90a" -> 90), 0 when it is not one.
int64_t smVersion(StringRef chip) {
  int64_t version = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consume_back("a");
  chip.consume_back("f");
  return chip.getAsInteger(10, version) ? 0 : version;
}

struct TxGPUTileContractionsPass
    : public tx::impl::TxGPUTileContractionsBase<TxGPUTileContractionsPass> {
  using Base::Base;

  LogicalResult checkSimtTiling(SimtTiling &t) {
    ModuleOp module = getOperation();
    if (!blockTile.empty()) {
      if (blockTile.size() != 3)
        return tx::emitErrorAt(module)
               << "tx-gpu-tile-contractions: block-tile takes "
                  "three sizes BM,BN,BK";
      t.bm = blockTile[0], t.bn = blockTile[1], t.bk = blockTile[2];
    }
    if (!threadTile.empty()) {
      if (threadTile.size() != 2)
        return tx::emitErrorAt(module)
               << "tx-gpu-tile-contractions: thread-tile takes "
                  "two sizes RM,RN";
      t.rm = threadTile[0], t.rn = threadTile[1];
    }
    if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.rm <= 0 || t.rn <= 0 ||
        t.bm % t.rm || t.bn % t.rn)
      return tx::emitErrorAt(module)
             << "tx-gpu-tile-contractions: tile sizes must be positive with "
                "RM dividing BM and RN dividing BN (got block "
             << t.bm << "x" << t.bn << "x" << t.bk << ", thread " << t.rm << "x"
             << t.rn << ")";
    return checkBlock(t.threads(), t.bm, t.bn, t.bk);
  }

  /// What both kernels need of a block: at most 1024 threads, and threads
  /// that divide the A and B tiles they stage.
  LogicalResult checkBlock(int64_t threads, int64_t bm, int64_t bn,
                           int64_t bk) {
    ModuleOp module = getOperation();
    if (threads > 1024)
      return tx::emitErrorAt(module)
             << "tx-gpu-tile-contractions: " << threads
             << " threads per block exceed the CUDA limit of 1024";
    if ((bm * bk) % threads || (bn * bk) % threads)
      return tx::emitErrorAt(module)
             << "tx-gpu-tile-contractions: the " << threads
             << " threads of a block must divide the A and B tiles (" << bm * bk
             << " and " << bn * bk << " elements)";
    return success();
  }

  LogicalResult checkMmaTiling(MmaTiling &t) {
    ModuleOp module = getOperation();
    if (!mmaBlockTile.empty()) {
      if (mmaBlockTile.size() != 3)
        return tx::emitErrorAt(module)
               << "tx-gpu-tile-contractions: mma-block-tile "
                  "takes three sizes BM,BN,BK";
      t.bm = mmaBlockTile[0], t.bn = mmaBlockTile[1], t.bk = mmaBlockTile[2];
    }
    if (!mmaWarpTile.empty()) {
      if (mmaWarpTile.size() != 2)
        return tx::emitErrorAt(module)
               << "tx-gpu-tile-contractions: mma-warp-tile "
                  "takes two sizes WM,WN";
      t.wm = mmaWarpTile[0], t.wn = mmaWarpTile[1];
    }
    if (t.wm <= 0 || t.wn <= 0 || t.bm <= 0 || t.bn <= 0 || t.bk <= 0 ||
        t.wm % 16 || t.wn % 8 || t.bk % 16 || t.bm % t.wm || t.bn % t.wn)
      return tx::emitErrorAt(module)
             << "tx-gpu-tile-contractions: tensor-core tiles need WM a "
                "multiple of 16, WN of 8, BK of 16, and warp tiles dividing "
                "the block tile (got block "
             << t.bm << "x" << t.bn << "x" << t.bk << ", warp " << t.wm << "x"
             << t.wn << ")";
    return checkBlock(t.threads(), t.bm, t.bn, t.bk);
  }

  /// The remark that names the kernel `op` gets (remarks=true).
  void remark(linalg::LinalgOp op, std::optional<MmaKind> kind,
              StringRef why, const SimtTiling &simt, const MmaTiling &mmaT) {
    InFlightDiagnostic diag = op.emitRemark();
    if (kind) {
      diag << "tensor cores: mma.sync "
           << (*kind == MmaKind::TF32 ? "m16n8k8 tf32"
               : *kind == MmaKind::BF16 ? "m16n8k16 bf16"
                                        : "m16n8k16 f16")
           << ", block " << mmaT.bm << "x" << mmaT.bn << "x" << mmaT.bk
           << ", " << mmaT.warpsM() * mmaT.warpsN() << " warps of " << mmaT.wm
           << "x" << mmaT.wn;
    } else {
      diag << "SIMT kernel (" << why << "): block " << simt.bm << "x"
           << simt.bn << "x" << simt.bk << ", " << simt.threads()
           << " threads of " << simt.rm << "x" << simt.rn;
    }
    if (int64_t blocks = splitKBlocksFor(op))
      diag << ", split-K towards " << blocks << " blocks";
  }

  /// Split-K needs partial sums that add: a multiply-accumulate into f32
  /// (f32 atomics; a 16-bit output would round every partial sum).
  int64_t splitKBlocksFor(linalg::LinalgOp op) {
    Type cType = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    return splitKBlocks > 0 && cType.isF32() && isMultiplyAccumulate(op)
               ? int64_t(splitKBlocks)
               : 0;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (splitKBlocks < 0) {
      tx::emitErrorAt(module)
          << "tx-gpu-tile-contractions: split-k-blocks must "
             "be 0 (off) or positive, got "
          << static_cast<int64_t>(splitKBlocks);
      return signalPassFailure();
    }
    SimtTiling simt;
    MmaTiling mmaTiling;
    if (testBreak == "drop-barrier") {
      simt.testBreak = mmaTiling.testBreak = TestBreak::DropBarrier;
    } else if (testBreak == "fragment-offset") {
      mmaTiling.testBreak = TestBreak::FragmentOffset;
    } else if (!testBreak.empty()) {
      tx::emitErrorAt(module)
          << "tx-gpu-tile-contractions: unknown test-break '" << testBreak
          << "' (expected drop-barrier or fragment-offset)";
      return signalPassFailure();
    }
    if (failed(checkSimtTiling(simt)) || failed(checkMmaTiling(mmaTiling)))
      return signalPassFailure();
    if (mma != "auto" && mma != "tf32" && mma != "off") {
      tx::emitErrorAt(module) << "tx-gpu-tile-contractions: unknown mma mode '"
                              << mma << "' (expected auto, tf32 or off)";
      return signalPassFailure();
    }
    int64_t sm = smVersion(chip);
    if (sm == 0) {
      tx::emitErrorAt(module) << "tx-gpu-tile-contractions: unknown chip '"
                              << chip << "' (expected sm_NN)";
      return signalPassFailure();
    }
    // mma.sync m16n8k16 (f16/bf16) and m16n8k8 (tf32) need Ampere or newer.
    bool tensorCores = mma != "off" && sm >= 80;
    if (mma == "tf32" && !tensorCores) {
      tx::emitErrorAt(module)
          << "tx-gpu-tile-contractions: mma=tf32 needs TF32 "
             "tensor cores (sm_80 or newer), not "
          << chip;
      return signalPassFailure();
    }

    SmallVector<std::pair<linalg::LinalgOp, GemmDims>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      // Already inside a kernel: leave it to the device-side lowering.
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (FailureOr<GemmDims> dims = matchGemm(op); succeeded(dims))
        gemms.push_back({op, *dims});
    });

    const int64_t sharedLimit = 48 * 1024;
    auto checkShared = [&](linalg::LinalgOp op,
                           int64_t bytes) -> LogicalResult {
      if (bytes <= sharedLimit)
        return success();
      return op.emitError() << "tx-gpu-tile-contractions: the A and B tiles "
                               "need "
                            << bytes << " bytes of shared memory, over the "
                            << sharedLimit << " a block gets without opt-in";
    };
    auto bytesOf = [](Value v) {
      return (int64_t)llvm::divideCeil(
          getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth(), 8);
    };
    IRRewriter rewriter(&getContext());
    for (auto [op, dims] : gemms) {
      std::string why;
      std::optional<MmaKind> kind;
      if (tensorCores)
        kind = matchMma(op, mma == "tf32", why);
      else
        why = mma == "off" ? "mma=off" : chip + " has no mma.sync m16n8k16";
      if (remarks)
        remark(op, kind, why, simt, mmaTiling);
      if (kind) {
        int64_t pad = *kind == MmaKind::TF32 ? 4 : 8;
        int64_t bytes = (mmaTiling.bm + mmaTiling.bn) * (mmaTiling.bk + pad) *
                        (*kind == MmaKind::TF32 ? 4 : 2);
        if (failed(checkShared(op, bytes)))
          return signalPassFailure();
        buildMmaGemm(op, dims, *kind, mmaTiling, splitKBlocksFor(op),
                     rewriter);
      } else {
        int64_t bytes = simt.bk * (simt.bm * bytesOf(op.getDpsInputs()[0]) +
                                   simt.bn * bytesOf(op.getDpsInputs()[1]));
        if (failed(checkShared(op, bytes)))
          return signalPassFailure();
        buildSimtGemm(op, dims, simt, splitKBlocksFor(op), rewriter);
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
