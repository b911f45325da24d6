//===- TileAndVectorize.cpp - CPU tiling and vectorisation ----------------===//
//
// tx-cpu-tile-and-vectorize, as transform-dialect scripts generated per class
// of GEMM shapes and applied in phases: cache blocks of the weight (N, K);
// operands packed per block when a call has enough tokens (packGemms);
// register tiles with the token loop peeled so that the main tiles are
// static; vectorisation of every static linalg op (GEMM tiles become
// vector.contract); accumulators kept in registers across the K loop
// (hoistLoopAccumulators); contractions lowered to outer products (FMAs) and
// transfers to 1-D loads and stores.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/CpuPipeline.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"
#include <numeric>

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUTILEANDVECTORIZE
#define GEN_PASS_DEF_TXEMITCINTERFACE
#define GEN_PASS_DEF_TXCOPIESTOLINALG
#define GEN_PASS_DEF_TXRETURNCONTIGUOUS
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// How one class of GEMMs is blocked for the cache: blocks of `nc` x `kc`
/// of the weight (0: that dimension is not blocked).
struct GemmClass {
  int64_t nc = 0, kc = 0;
  bool operator==(const GemmClass &o) const {
    return nc == o.nc && kc == o.kc;
  }
};

/// The cache block along a static dimension of `size`: the largest multiple
/// of the register tile `tile` that is at most `block` and divides `size`,
/// so that every block has static sizes (and vectorises); 0 when the
/// dimension is dynamic, fits in one block, or has no such divisor of at
/// least a quarter of `block` (smaller blocks would only add loop overhead).
int64_t cacheBlock(int64_t size, int64_t block, int64_t tile) {
  if (block <= 0 || ShapedType::isDynamic(size) || size <= block)
    return 0;
  for (int64_t b = block - block % tile; b >= tile && 4 * b >= block;
       b -= tile)
    if (size % b == 0)
      return b;
  return 0;
}

/// The start of a transform script's entry point.
constexpr const char *kScriptHead =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__transform_main(%root: !transform.any_op "
    "{transform.readonly}) {\n";

/// Matches the GEMMs of class `index` into `%mm<index>` and opens a foreach.
static void openClass(llvm::raw_ostream &os, unsigned index) {
  os << "    %mm" << index
     << " = transform.structured.match ops{[\"linalg.matmul\"]} attributes "
        "{tx.gemm_class = "
     << index << " : i64} in %root : (!transform.any_op) -> !transform.any_op\n";
  os << "    transform.foreach %mm" << index << " : !transform.any_op {\n";
  os << "    ^bb0(%one: !transform.any_op):\n";
}

/// The cache blocks of the GEMMs of class `index`: loops over N, then K
/// blocks, so that one weight block stays in cache while every token row
/// passes over it. Empty when the class is not blocked.
std::string blockClass(unsigned index, const GemmClass &c, bool parallel) {
  unsigned blocked = (c.nc > 0) + (c.kc > 0);
  if (!blocked)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  openClass(os, index);
  if (parallel && c.nc > 0) {
    // The N blocks write disjoint output columns: an scf.forall (threads),
    // the K blocks inside it a sequential loop (they accumulate).
    os << "      %nblocked, %forall = transform.structured.tile_using_forall "
          "%one tile_sizes [0, "
       << c.nc << ", 0] : (!transform.any_op) -> (!transform.any_op, "
                  "!transform.any_op)\n";
    if (c.kc > 0)
      os << "      %blocked, %kblocks = transform.structured.tile_using_for "
            "%nblocked tile_sizes [0, 0, "
         << c.kc << "] : (!transform.any_op) -> (!transform.any_op, "
                    "!transform.any_op)\n";
    os << "    }\n";
    return s;
  }
  os << "      %blocked, %blocks:" << blocked
     << " = transform.structured.tile_using_for %one tile_sizes [0, " << c.nc
     << ", " << c.kc << "] : (!transform.any_op) -> (!transform.any_op";
  for (unsigned i = 0; i < blocked; ++i)
    os << ", !transform.any_op";
  os << ")\n    }\n";
  return s;
}

/// The register tiles (M, N, K) of the GEMMs of class `index` (whole GEMMs
/// or cache blocks), and the token loop peeled so that the main tiles are
/// static (the last < M rows one at a time, so that they vectorise too).
std::string tileClass(unsigned index, bool peel, ArrayRef<int64_t> tile) {
  std::string s;
  llvm::raw_string_ostream os(s);
  openClass(os, index);
  os << "      %t, %loops:3 = transform.structured.tile_using_for %one"
     << " tile_sizes [" << tile[0] << ", " << tile[1] << ", " << tile[2]
     << "] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, "
        "!transform.any_op, !transform.any_op)\n";
  if (peel)
    os << R"mlir(      %m = transform.cast %loops#0 : !transform.any_op to !transform.op<"scf.for">
      %main, %rest = transform.loop.peel %m
          : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      %rest_mm = transform.structured.match ops{["linalg.matmul"]} in %rest
          : (!transform.any_op) -> !transform.any_op
      %rt, %rl = transform.structured.tile_using_for %rest_mm tile_sizes [1, 0, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)mlir";
  os << "    }\n";
  return s;
}

/// The packing copies (see packGemms), tiled so that they vectorise in
/// small pieces: the weight transpose in 8x8 tiles, the token rows 8 floats
/// at a time.
constexpr const char *kTilePacking = R"mlir(
    %tr = transform.structured.match ops{["linalg.transpose"]} attributes {tx.pack} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %tr : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      %t, %loops:2 = transform.structured.tile_using_for %one tile_sizes [8, 8]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    }
    %cp = transform.structured.match ops{["linalg.copy"]} attributes {tx.pack} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %cp : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      %t, %loops:2 = transform.structured.tile_using_for %one tile_sizes [1, 8]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    }
)mlir";

/// Tags `op` with the index of `key` in `classes` (added when new): the
/// transform scripts match each class by that tag.
template <typename Key>
void tagClass(Operation *op, SmallVectorImpl<Key> &classes, const Key &key) {
  auto *it = llvm::find(classes, key);
  if (it == classes.end())
    it = classes.insert(classes.end(), key);
  op->setAttr("tx.gemm_class",
              IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                               it - classes.begin()));
}

/// Whether `mm` is y = x W^T: maps (m, k), (n, k), (m, n).
bool isTransposedB(linalg::MatmulOp mm) {
  MLIRContext *ctx = mm.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> want = AffineMap::inferFromExprList(
      ArrayRef<ArrayRef<AffineExpr>>{{m, k}, {n, k}, {m, n}}, ctx);
  return mm.getIndexingMapsArray() == ArrayRef<AffineMap>(want);
}

/// Packs the operands of every y = x W^T GEMM (whole or cache block) that
/// has at least `minTokens` rows at run time: the weight block transposed
/// into a [K, N] buffer and the token rows copied into a [M, K] buffer, so
/// that the register tiles read contiguous rows (no transposes in the
/// kernel) at strides that are not the weight's (no cache-set conflicts on
/// power-of-two hidden sizes). Fewer rows keep the direct GEMM: packing a
/// weight costs as much as a GEMV with it.
void packGemms(ModuleOp module, int64_t minTokens) {
  SmallVector<linalg::MatmulOp> gemms;
  module.walk([&](linalg::MatmulOp mm) {
    if (mm->hasAttr("tx.gemm_class") && isTransposedB(mm))
      gemms.push_back(mm);
  });
  for (linalg::MatmulOp mm : gemms) {
    Value a = mm.getDpsInputs()[0], w = mm.getDpsInputs()[1];
    Value c = mm.getDpsInits()[0];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    if (!wType.hasStaticShape())
      continue;
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
    Type elem = aType.getElementType();
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    Value rows = memref::DimOp::create(b, loc, a, 0);
    Value enough = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, rows,
        arith::ConstantIndexOp::create(b, loc, minTokens));
    auto branch = scf::IfOp::create(b, loc, enough, /*withElseRegion=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    UnitAttr unit = b.getUnitAttr();
    Value wt = memref::AllocOp::create(b, loc, MemRefType::get({k, n}, elem));
    auto transpose = linalg::TransposeOp::create(b, loc, w, wt,
                                                 ArrayRef<int64_t>{1, 0});
    transpose->setAttr("tx.pack", unit);
    Value ap = memref::AllocOp::create(
        b, loc, MemRefType::get({aType.getDimSize(0), k}, elem),
        aType.isDynamicDim(0) ? ValueRange{rows} : ValueRange{});
    auto copy = linalg::CopyOp::create(b, loc, a, ap);
    copy->setAttr("tx.pack", unit);
    auto packed = linalg::MatmulOp::create(b, loc, ValueRange{ap, wt},
                                           ValueRange{c});
    packed->setAttr("tx.gemm_class", mm->getAttr("tx.gemm_class"));
    packed->setAttr("tx.packed", unit);
    memref::DeallocOp::create(b, loc, ap);
    memref::DeallocOp::create(b, loc, wt);
    mm->moveBefore(branch.elseBlock()->getTerminator());
  }
}

/// After the GEMM tiling (and tileLargeStaticOps): vectorise every static
/// linalg op (GEMM tiles become vector.contract) and hoist loop-invariant
/// subviews.
constexpr const char *kVectorize = R"mlir(
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %vf = transform.structured.vectorize_children_and_apply_patterns %funcs
        : (!transform.any_op) -> !transform.any_op
    // Subviews (the accumulator's among them) that do not depend on the
    // K loop move out of it. (Keeping the accumulator in registers across
    // the K loop is not done: upstream hoist_redundant_vector_transfers
    // refuses transfers whose source is a subview, which on buffers every
    // tile is.)
    %fors = transform.structured.match ops{["scf.for"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %fors : !transform.any_op
    transform.yield
  }
}
)mlir";

/// After hoistLoopAccumulators: contractions to outer products (FMAs),
/// transfers to 1-D loads and stores.
constexpr const char *kLower = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir";

/// The largest vector a non-GEMM op is vectorised to whole, in elements.
constexpr int64_t kMaxWholeVector = 4096;
/// The tile of the innermost parallel loop of a larger op.
constexpr int64_t kInnerTile = 64;

/// The tile for a static loop of `size` that is vectorised `kInnerTile` at
/// a time: the largest divisor of `size` up to `kInnerTile` when it is at
/// least 8 (every tile then static, so every tile vectorises), else
/// `kInnerTile` (a remainder tile of dynamic size runs as scalar loops).
int64_t innerTile(int64_t size) {
  for (int64_t t = kInnerTile; t >= 8; --t)
    if (size % t == 0)
      return t;
  return kInnerTile;
}

/// Tiles every static linalg op that is not a GEMM (elementwise ops, norms,
/// attention, copies) and would otherwise become one vector of more than
/// kMaxWholeVector elements: one element of every parallel loop but the
/// innermost, kInnerTile of that one; with reduction loops, one element of
/// every parallel loop and the reductions whole. Vectorising a
/// 2048x4096 add whole gives a vector<2048x4096xf32> that the transfer and
/// LLVM lowerings unroll element by element: compile time then grows with
/// the static sizes (minutes for one layer), and the code with it.
LogicalResult tileLargeStaticOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr("tx.gemm_class") || op->hasAttr("tx.pack") ||
        op->hasAttr("tx.packed") || !op.hasPureBufferSemantics())
      return;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    int64_t elements = 1;
    for (int64_t r : ranges)
      elements = elements > kMaxWholeVector ? elements : elements * r;
    if (elements > kMaxWholeVector)
      ops.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::LinalgOp op : ops) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> tiles(ranges.size(), 0);
    // With a reduction, every parallel loop takes one element (the
    // reduction is the vector); without, the innermost takes kInnerTile.
    int64_t inner = -1;
    bool reduces = false;
    for (auto [i, it] : llvm::enumerate(iterators)) {
      if (it == utils::IteratorType::parallel)
        inner = i;
      else
        reduces = true;
    }
    if (reduces)
      inner = -1;
    for (auto [i, it] : llvm::enumerate(iterators)) {
      if (it != utils::IteratorType::parallel || ranges[i] <= 1)
        continue;
      if (static_cast<int64_t>(i) != inner)
        tiles[i] = 1;
      else if (ranges[i] > kInnerTile)
        tiles[i] = innerTile(ranges[i]);
    }
    if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
      continue;
    scf::SCFTilingOptions options;
    options.setTileSizes(
        getAsIndexOpFoldResult(module.getContext(), tiles));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return op->emitError("internal error: cannot tile this op for "
                           "vectorisation");
    rewriter.eraseOp(op);
  }
  return success();
}

struct TxCpuTileAndVectorizePass
    : tx::impl::TxCpuTileAndVectorizeBase<TxCpuTileAndVectorizePass> {
  using TxCpuTileAndVectorizeBase::TxCpuTileAndVectorizeBase;
  void runOnOperation() override {
    std::optional<SmallVector<int64_t>> tile = sizes(
        gemmTile, {8, 8, 8}, 1, "gemm-tile must be three positive sizes M,N,K");
    std::optional<SmallVector<int64_t>> packedTile =
        sizes(gemmPackedTile, {8, 32, 8}, 1,
              "gemm-packed-tile must be three positive sizes M,N,K");
    std::optional<SmallVector<int64_t>> block =
        sizes(gemmCacheTile, {256, 256}, 0,
              "gemm-cache-tile must be two sizes N,K (0: no cache blocking)");
    if (!tile || !packedTile || !block)
      return signalPassFailure();
    // Each GEMM gets the class of its shapes (see GemmClass).
    SmallVector<GemmClass> classes;
    getOperation().walk([&](linalg::MatmulOp mm) {
      auto a = cast<MemRefType>(mm.getDpsInputs()[0].getType());
      auto c = cast<MemRefType>(mm.getDpsInits()[0].getType());
      // Blocks that both register tiles divide.
      GemmClass gemm;
      gemm.nc = cacheBlock(c.getDimSize(1), (*block)[0],
                           std::lcm((*tile)[1], (*packedTile)[1]));
      gemm.kc = cacheBlock(a.getDimSize(1), (*block)[1],
                           std::lcm((*tile)[2], (*packedTile)[2]));
      tagClass(mm, classes, gemm);
    });
    // Cache blocks, then packing, then register tiles.
    std::string blocks = kScriptHead;
    for (auto [index, gemm] : llvm::enumerate(classes))
      blocks += blockClass(index, gemm, parallelBlocks);
    blocks += "    transform.yield\n  }\n}\n";
    if (failed(applyScript(blocks)))
      return signalPassFailure();
    if (gemmPackMinTokens > 0)
      packGemms(getOperation(), gemmPackMinTokens);
    // Register tiles: packed GEMMs (contiguous rows, no transposes) take
    // the wider gemm-packed-tile where it divides their block.
    SmallVector<std::pair<SmallVector<int64_t>, bool>> tiles;
    getOperation().walk([&](linalg::MatmulOp mm) {
      if (!mm->hasAttr("tx.gemm_class"))
        return;
      auto a = cast<MemRefType>(mm.getDpsInputs()[0].getType());
      auto c = cast<MemRefType>(mm.getDpsInits()[0].getType());
      SmallVector<int64_t> t = *tile;
      if (mm->hasAttr("tx.packed") && !c.isDynamicDim(1) &&
          !a.isDynamicDim(1) && c.getDimSize(1) % (*packedTile)[1] == 0 &&
          a.getDimSize(1) % (*packedTile)[2] == 0)
        t = *packedTile;
      int64_t rows = a.getDimSize(0);
      bool peel = ShapedType::isDynamic(rows) || rows % t[0] != 0;
      tagClass(mm, tiles, std::make_pair(t, peel));
    });
    std::string script = kScriptHead;
    for (auto [index, key] : llvm::enumerate(tiles))
      script += tileClass(index, key.second, key.first);
    script += kTilePacking;
    script += "    transform.yield\n  }\n}\n";
    if (failed(applyScript(script)))
      return signalPassFailure();
    if (failed(tileLargeStaticOps(getOperation())))
      return signalPassFailure();
    if (failed(applyScript(std::string(kScriptHead) + kVectorize)))
      return signalPassFailure();
    getOperation().walk([](Operation *op) {
      op->removeAttr("tx.gemm_class");
      op->removeAttr("tx.pack");
      op->removeAttr("tx.packed");
    });
    tx::hoistLoopAccumulators(getOperation(), testUnsafeHoist);
    if (failed(applyScript(kLower)))
      return signalPassFailure();
  }

  /// The sizes of a list option: `defaults` when it is empty; none (and an
  /// error) when it has another count or a size below `min`.
  std::optional<SmallVector<int64_t>> sizes(ArrayRef<int64_t> option,
                                            ArrayRef<int64_t> defaults,
                                            int64_t min, StringRef message) {
    SmallVector<int64_t> result(option.empty() ? defaults : option);
    if (result.size() != defaults.size() ||
        llvm::any_of(result, [&](int64_t v) { return v < min; })) {
      getOperation().emitError(message);
      return std::nullopt;
    }
    return result;
  }

  LogicalResult applyScript(StringRef script) {
    OwningOpRef<ModuleOp> transformModule =
        parseSourceString<ModuleOp>(script, &getContext());
    if (!transformModule)
      return getOperation().emitError(
          "internal error: a tiling script does not parse");
    Operation *entry = transform::detail::findTransformEntryPoint(
        getOperation(), *transformModule, "__transform_main");
    if (!entry)
      return failure();
    return transform::applyTransformNamedSequence(
        getOperation(), entry, *transformModule, transform::TransformOptions());
  }
};

struct TxEmitCInterfacePass
    : tx::impl::TxEmitCInterfaceBase<TxEmitCInterfacePass> {
  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        func->setAttr("llvm.emit_c_interface", unit);
  }
};

struct TxCopiesToLinalgPass
    : tx::impl::TxCopiesToLinalgBase<TxCopiesToLinalgPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

struct TxReturnContiguousPass
    : tx::impl::TxReturnContiguousBase<TxReturnContiguousPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      SmallVector<Type> results(func.getResultTypes());
      for (auto [i, t] : llvm::enumerate(results)) {
        auto mt = dyn_cast<MemRefType>(t);
        if (mt && !mt.getLayout().isIdentity())
          t = MemRefType::get(mt.getShape(), mt.getElementType(),
                              MemRefLayoutAttrInterface(),
                              mt.getMemorySpace());
      }
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          Type want = results[operand.getOperandNumber()];
          Value v = operand.get();
          if (v.getType() == want)
            continue;
          auto mt = cast<MemRefType>(want);
          SmallVector<Value> dyn;
          for (int64_t d = 0; d < mt.getRank(); ++d)
            if (mt.isDynamicDim(d))
              dyn.push_back(memref::DimOp::create(b, ret.getLoc(), v, d));
          Value copy = memref::AllocOp::create(b, ret.getLoc(), mt, dyn);
          linalg::CopyOp::create(b, ret.getLoc(), v, copy);
          operand.set(copy);
        }
      });
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     results));
    }
  }
};
} // namespace
