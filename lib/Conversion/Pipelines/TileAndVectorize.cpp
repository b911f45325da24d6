//===- TileAndVectorize.cpp - CPU tiling and vectorisation ----------------===//
//
// A transform-dialect script, instantiated with the tile sizes and applied
// to the module: tile each linalg.matmul (M, N, K), peel the token loop so
// that the main tiles are static (the remainder rows one by one), vectorise every static linalg op (GEMM
// tiles become vector.contract), and lower contractions to outer products
// (FMAs), transfers to 1-D loads and stores.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/CpuPipeline.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUTILEANDVECTORIZE
#define GEN_PASS_DEF_TXEMITCINTERFACE
#define GEN_PASS_DEF_TXCOPIESTOLINALG
#define GEN_PASS_DEF_TXRETURNCONTIGUOUS
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// How one class of GEMMs is tiled: cache blocks of `nc` x `kc` of the weight
/// (0: that dimension is not blocked), then register tiles; `peel` when the
/// token count is dynamic or not a multiple of the M tile.
struct GemmClass {
  int64_t nc = 0, kc = 0;
  bool peel = true;
  bool operator==(const GemmClass &o) const {
    return nc == o.nc && kc == o.kc && peel == o.peel;
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

/// The tiling of the GEMMs of class `index`, in the transform dialect: the
/// cache blocks (loops over N, then K, so that one weight block stays in
/// cache while every token row passes over it), the register tiles inside
/// them (M, N, K), and the token loop peeled so that the main tiles are
/// static (the last < M rows one at a time, so that they vectorise too).
std::string tileClass(unsigned index, const GemmClass &c,
                      ArrayRef<int64_t> tile) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "    %mm" << index
     << " = transform.structured.match ops{[\"linalg.matmul\"]} attributes "
        "{tx.gemm_class = "
     << index << " : i64} in %root : (!transform.any_op) -> !transform.any_op\n";
  os << "    transform.foreach %mm" << index << " : !transform.any_op {\n";
  os << "    ^bb0(%one: !transform.any_op):\n";
  std::string gemm = "%one";
  unsigned blocked = (c.nc > 0) + (c.kc > 0);
  if (blocked) {
    os << "      %blocked, %blocks:" << blocked
       << " = transform.structured.tile_using_for %one tile_sizes [0, " << c.nc
       << ", " << c.kc << "] : (!transform.any_op) -> (!transform.any_op";
    for (unsigned i = 0; i < blocked; ++i)
      os << ", !transform.any_op";
    os << ")\n";
    gemm = "%blocked";
  }
  os << "      %t, %loops:3 = transform.structured.tile_using_for " << gemm
     << " tile_sizes [" << tile[0] << ", " << tile[1] << ", " << tile[2]
     << "] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, "
        "!transform.any_op, !transform.any_op)\n";
  if (c.peel)
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

/// After the GEMM tiling: vectorise every static linalg op (GEMM tiles
/// become vector.contract), lower contractions to outer products (FMAs) and
/// transfers to 1-D loads/stores.
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

struct TxCpuTileAndVectorizePass
    : tx::impl::TxCpuTileAndVectorizeBase<TxCpuTileAndVectorizePass> {
  using TxCpuTileAndVectorizeBase::TxCpuTileAndVectorizeBase;
  void runOnOperation() override {
    SmallVector<int64_t> tile(gemmTile.begin(), gemmTile.end());
    if (tile.empty())
      tile = {8, 8, 8};
    if (tile.size() != 3 || llvm::any_of(tile, [](int64_t t) { return t <= 0; })) {
      getOperation().emitError("gemm-tile must be three positive sizes M,N,K");
      return signalPassFailure();
    }
    SmallVector<int64_t> block(gemmCacheTile.begin(), gemmCacheTile.end());
    if (block.empty())
      block = {256, 256};
    if (block.size() != 2 || llvm::any_of(block, [](int64_t b) { return b < 0; })) {
      getOperation().emitError(
          "gemm-cache-tile must be two sizes N,K (0: no cache blocking)");
      return signalPassFailure();
    }
    // Each GEMM gets the class of its shapes (see GemmClass).
    SmallVector<GemmClass> classes;
    Builder b(&getContext());
    getOperation().walk([&](linalg::MatmulOp mm) {
      auto a = cast<MemRefType>(mm.getDpsInputs()[0].getType());
      auto c = cast<MemRefType>(mm.getDpsInits()[0].getType());
      GemmClass gemm;
      int64_t rows = a.getDimSize(0);
      gemm.peel = ShapedType::isDynamic(rows) || rows % tile[0] != 0;
      gemm.nc = cacheBlock(c.getDimSize(1), block[0], tile[1]);
      gemm.kc = cacheBlock(a.getDimSize(1), block[1], tile[2]);
      auto *it = llvm::find(classes, gemm);
      if (it == classes.end())
        it = classes.insert(classes.end(), gemm);
      mm->setAttr("tx.gemm_class", b.getI64IntegerAttr(it - classes.begin()));
    });
    std::string script =
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op "
        "{transform.readonly}) {\n";
    for (auto [index, gemm] : llvm::enumerate(classes))
      script += tileClass(index, gemm, tile);
    script += kVectorize;
    if (failed(applyScript(script)))
      return signalPassFailure();
    getOperation().walk(
        [](linalg::MatmulOp mm) { mm->removeAttr("tx.gemm_class"); });
    tx::hoistLoopAccumulators(getOperation());
    if (failed(applyScript(kLower)))
      return signalPassFailure();
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
