//===- TileAndVectorize.cpp - CPU tiling and vectorisation ----------------===//
//
// tx-cpu-tile-and-vectorize, as transform-dialect scripts built per class
// of GEMM shapes and applied in phases: cache blocks of the weight (N, K);
// the weight packed when a call has enough tokens (packGemms: weight N
// block once, then token blocks, K blocks inside them); with threads, the N
// blocks or the token blocks as tasks; register tiles with the token loop
// peeled so that the main tiles are static; vectorisation of every static
// linalg op (GEMM tiles become vector.contract); accumulators kept in
// registers across the K loop (hoistLoopAccumulators); contractions lowered
// to outer products (FMAs) and transfers to 1-D loads and stores. The
// scripts are built with the transform ops' builders (ScriptBuilder) and
// applied by the interpreter.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Codegen/CPUCodegen.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Linalg/TransformOps/LinalgTransformOps.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformTypes.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include <numeric>

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUTILEANDVECTORIZE
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// Marks on the payload ops while the pass runs: a GEMM's class (the
/// transform scripts match each class by it), the weight packing of
/// packGemms and the GEMMs on the packed weight, and the many-tokens copy of
/// a GEMM split on its token count (splitOnTokenCount).
constexpr StringLiteral kGemmClassAttr = "tx.gemm_class";
constexpr StringLiteral kPackAttr = "tx.pack";
constexpr StringLiteral kPackedAttr = "tx.packed";
constexpr StringLiteral kManyTokensAttr = "tx.many_tokens";

/// With threads, a GEMM with at least this many N cache blocks runs them as
/// tasks; one with fewer (or none) runs its packed token blocks as tasks
/// when it has enough tokens to be packed (the direct GEMM, for fewer
/// tokens, still runs its N blocks as tasks).
constexpr int64_t kMinNBlockTasks = 8;

/// Which loop of a GEMM runs its iterations as tasks (scf.forall).
enum class Tasks { None, NBlocks, TokenBlocks };

/// How one class of GEMMs is blocked for the cache: blocks of `nc` x `kc`
/// of the weight (0: that dimension is not blocked), its tasks, whether
/// packGemms may pack it (then its K blocks are made by packGemms inside
/// the token blocks), and whether it is the few-tokens copy of a GEMM split
/// on its token count (never packed). The direct GEMMs of both run only
/// with fewer than gemm-pack-min-tokens rows (belowPacking): the few-token
/// kernel where it applies, else register tiles after K blocks of tileClass.
struct GemmClass {
  int64_t nc = 0, kc = 0;
  Tasks tasks = Tasks::None;
  bool packable = false;
  bool fewTokens = false;
  bool belowPacking() const { return packable || fewTokens; }
  bool operator==(const GemmClass &o) const {
    return nc == o.nc && kc == o.kc && tasks == o.tasks &&
           packable == o.packable && fewTokens == o.fewTokens;
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

/// Builds the body of a transform script's entry point: the ops of the
/// transform dialect and its extensions made with their builders, all
/// handles `!transform.any_op` unless said otherwise.
class ScriptBuilder {
public:
  ScriptBuilder(OpBuilder &b, Location loc)
      : b(b), loc(loc), anyOp(b.getType<transform::AnyOpType>()) {}

  /// transform.structured.match ops{[name]} [attributes {attrs}] in target.
  Value match(Value target, StringRef name,
              ArrayRef<NamedAttribute> attrs = {}) {
    DictionaryAttr opAttrs =
        attrs.empty() ? DictionaryAttr() : b.getDictionaryAttr(attrs);
    return transform::MatchOp::create(b, loc, anyOp, target,
                                      b.getStrArrayAttr({name}),
                                      transform::MatchInterfaceEnumAttr(),
                                      opAttrs, TypeAttr(), ArrayAttr())
        .getResult();
  }

  /// transform.foreach over `targets`, `body` building on the handle of one
  /// payload op.
  void foreach(Value targets, function_ref<void(Value)> body) {
    auto loop = transform::ForeachOp::create(b, loc, TypeRange(),
                                             ValueRange{targets},
                                             /*with_zip_shortest=*/false);
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.createBlock(&loop.getBody(), {}, {anyOp}, {loc});
    body(block->getArgument(0));
    transform::YieldOp::create(b, loc);
  }

  /// transform.structured.tile_using_for target tile_sizes [sizes]: the
  /// tiled op, then one loop per non-zero size.
  transform::TileUsingForOp tileUsingFor(Value target,
                                         ArrayRef<int64_t> sizes) {
    SmallVector<Type> loops(sizes.size() - llvm::count(sizes, 0), anyOp);
    return transform::TileUsingForOp::create(
        b, loc, anyOp, loops, target, ValueRange(),
        b.getDenseI64ArrayAttr(sizes), /*interchange=*/DenseI64ArrayAttr(),
        b.getDenseBoolArrayAttr(SmallVector<bool>(sizes.size(), false)));
  }

  /// transform.structured.tile_using_forall target tile_sizes [sizes]: the
  /// tiled op and the scf.forall.
  transform::TileUsingForallOp tileUsingForall(Value target,
                                               ArrayRef<int64_t> sizes) {
    return transform::TileUsingForallOp::create(
        b, loc, anyOp, anyOp, target, /*num_threads=*/ValueRange(),
        /*tile_sizes=*/ValueRange(), /*packed_num_threads=*/Value(),
        /*packed_tile_sizes=*/Value(),
        /*static_num_threads=*/DenseI64ArrayAttr(),
        b.getDenseI64ArrayAttr(sizes), /*mapping=*/ArrayAttr());
  }

  /// transform.loop.peel of the loop `target` (cast to scf.for): the main
  /// loop and the remainder.
  transform::LoopPeelOp peel(Value target) {
    Value loop = transform::CastOp::create(
        b, loc, transform::OperationType::get(b.getContext(), "scf.for"),
        target);
    return transform::LoopPeelOp::create(b, loc, anyOp, anyOp, loop);
  }

  /// transform.apply_patterns to target { patterns }.
  void applyPatterns(Value target, function_ref<void()> patterns) {
    transform::ApplyPatternsOp::create(
        b, loc, target, [&](OpBuilder &, Location) { patterns(); });
  }

  OpBuilder &b;
  Location loc;
  Type anyOp;
};

/// A transform module with the entry point
///   @__transform_main(%root: !transform.any_op {transform.readonly})
/// whose body `body` builds (the final transform.yield is added).
OwningOpRef<ModuleOp>
buildScript(MLIRContext *ctx,
            function_ref<void(ScriptBuilder &, Value root)> body) {
  Location loc = UnknownLoc::get(ctx);
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b, loc);
  (*module)->setAttr(transform::TransformDialect::kWithNamedSequenceAttrName,
                     b.getUnitAttr());
  b.setInsertionPointToEnd(module->getBody());
  DictionaryAttr readonly = b.getDictionaryAttr(b.getNamedAttr(
      transform::TransformDialect::kArgReadOnlyAttrName, b.getUnitAttr()));
  auto entry = transform::NamedSequenceOp::create(
      b, loc, "__transform_main", b.getType<transform::AnyOpType>(),
      TypeRange(),
      [&](OpBuilder &nested, Location loc, BlockArgument root) {
        ScriptBuilder script(nested, loc);
        body(script, root);
        transform::YieldOp::create(nested, loc);
      },
      /*attrs=*/{}, /*argAttrs=*/{readonly});
  // The builder above does not set the argument attributes it is given.
  entry.setArgAttrsAttr(b.getArrayAttr({readonly}));
  return module;
}

/// The GEMMs of class `index`: linalg.matmul tagged tx.gemm_class = index.
Value matchClass(ScriptBuilder &s, Value root, unsigned index) {
  return s.match(root, linalg::MatmulOp::getOperationName(),
                 s.b.getNamedAttr(kGemmClassAttr,
                                  s.b.getI64IntegerAttr(index)));
}

/// The cache blocks of the GEMMs of class `index`: loops over N, then K
/// blocks, so that one weight block stays in cache while every token row
/// passes over it (N blocks only when its direct GEMMs run below the
/// packing threshold: see packGemms and tileClass).
/// Nothing when the class is not blocked.
void blockClass(ScriptBuilder &s, Value root, unsigned index,
                const GemmClass &c) {
  int64_t kc = c.belowPacking() ? 0 : c.kc;
  if (c.nc <= 0 && kc <= 0)
    return;
  s.foreach(matchClass(s, root, index), [&](Value one) {
    if (c.tasks == Tasks::NBlocks && c.nc > 0) {
      // The N blocks write disjoint output columns: an scf.forall
      // (threads), the K blocks inside it a sequential loop (they
      // accumulate).
      auto nBlocks = s.tileUsingForall(one, {0, c.nc, 0});
      if (kc > 0)
        s.tileUsingFor(nBlocks.getTiledOp(), {0, 0, kc});
      return;
    }
    s.tileUsingFor(one, {0, c.nc, kc});
  });
}

/// The register tiles (M, N, K) of the GEMMs of class `index` (whole GEMMs
/// or cache blocks), after a loop over K blocks of `kBlock` when not 0 (the
/// direct GEMM of a packable class), and the token loop peeled so that the
/// main tiles are static (the last < M rows one at a time, so that they
/// vectorise too).
void tileClass(ScriptBuilder &s, Value root, unsigned index, bool peel,
               ArrayRef<int64_t> tile, int64_t kBlock) {
  s.foreach(matchClass(s, root, index), [&](Value one) {
    if (kBlock > 0)
      one = s.tileUsingFor(one, {0, 0, kBlock}).getTiledLinalgOp();
    auto tiled = s.tileUsingFor(one, tile);
    if (!peel)
      return;
    auto peeled = s.peel(tiled.getLoops()[0]);
    Value rest = s.match(peeled.getRemainderLoop(),
                         linalg::MatmulOp::getOperationName());
    s.tileUsingFor(rest, {1, 0, 0});
  });
}

/// The weight packing (see packGemms), tiled so that it vectorises in
/// small pieces: 8x8 transposes.
void tilePacking(ScriptBuilder &s, Value root) {
  NamedAttribute pack = s.b.getNamedAttr(kPackAttr, s.b.getUnitAttr());
  s.foreach(s.match(root, linalg::TransposeOp::getOperationName(), pack),
            [&](Value one) { s.tileUsingFor(one, {8, 8}); });
}

/// Tags `op` with the index of `key` in `classes` (added when new): the
/// transform scripts match each class by that tag.
template <typename Key>
void tagClass(Operation *op, SmallVectorImpl<Key> &classes, const Key &key) {
  auto *it = llvm::find(classes, key);
  if (it == classes.end())
    it = classes.insert(classes.end(), key);
  op->setAttr(kGemmClassAttr,
              IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                               it - classes.begin()));
}

/// Splits `mm` on its token count: `scf.if rows >= minTokens` with a copy
/// marked kManyTokensAttr (packGemms packs it without a check and runs its
/// token blocks as tasks) and `mm` in the else branch (its class's
/// fewTokens: never packed). Returns the copy.
linalg::MatmulOp splitOnTokenCount(linalg::MatmulOp mm, int64_t minTokens) {
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  Value rows = memref::DimOp::create(b, loc, mm.getDpsInputs()[0], 0);
  Value enough = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sge, rows,
      arith::ConstantIndexOp::create(b, loc, minTokens));
  auto branch = scf::IfOp::create(b, loc, enough, /*withElseRegion=*/true);
  b.setInsertionPointToStart(branch.thenBlock());
  auto many = cast<linalg::MatmulOp>(b.clone(*mm));
  many->setAttr(kManyTokensAttr, b.getUnitAttr());
  mm->moveBefore(branch.elseBlock()->getTerminator());
  return many;
}

/// Packs the weight of every y = x W^T GEMM (whole or N cache block) that
/// has at least `minTokens` rows at run time, and goes through its rows in
/// BLIS's loop order: the weight block transposed once into panels of
/// `panel` columns (BLIS's micro-panels: [N / panel, K, panel], each panel
/// contiguous; one [K, N] panel where `panel` does not divide N); then per
/// block of `tokenBlock` token rows (0: one block), per K block of its
/// class (`kc` of `classes`; the whole K when not blocked), panel after
/// panel, the rows' K block multiplied with the panel's K block. The
/// register tiles then read contiguous weight rows (no transposes in the
/// kernel), one panel's K block a contiguous kc x panel stream that stays
/// in L1 while every token row of the block passes over it (in a [K, N]
/// block the tile's rows were N apart: at N = 256 a 1 KiB stride that
/// mapped every row to a few L1 sets; packed qkv GEMMs at 512 tokens went
/// from 0.80 to 0.85 of OpenBLAS, gate/up from 0.80 to 0.93, on the Intel
/// Xeon of bench/README.md),
/// and the output block of a token block stays in cache across the K
/// blocks that accumulate into it (with the K loop outside the token
/// blocks, every K block read and wrote the whole output column block
/// again: at 2048 tokens, 2 MB from memory each time). The token rows are
/// read where they are: copying each K block of them into a buffer (BLIS's
/// packed A) was 2-22% slower on the Llama-3-8B shapes, as every N block
/// copied all the rows again. Fewer rows keep the direct GEMM: packing a
/// weight costs as much as a GEMV with it. A GEMM split by
/// splitOnTokenCount is packed without the check (its many-tokens copy),
/// its token blocks an scf.forall (tasks), or not at all (its few-tokens
/// copy). The sums are the same in the same order as the direct GEMM's.
void packGemms(ModuleOp module, int64_t minTokens, int64_t tokenBlock,
               int64_t panel, ArrayRef<GemmClass> classes) {
  SmallVector<linalg::MatmulOp> gemms;
  module.walk([&](linalg::MatmulOp mm) {
    auto index = mm->getAttrOfType<IntegerAttr>(kGemmClassAttr);
    if (index && classes[index.getInt()].packable)
      gemms.push_back(mm);
  });
  for (linalg::MatmulOp mm : gemms) {
    Value a = mm.getDpsInputs()[0], w = mm.getDpsInputs()[1];
    Value c = mm.getDpsInits()[0];
    auto aType = cast<MemRefType>(a.getType());
    auto wType = cast<MemRefType>(w.getType());
    const GemmClass &cls =
        classes[mm->getAttrOfType<IntegerAttr>(kGemmClassAttr).getInt()];
    bool many = mm->hasAttr(kManyTokensAttr);
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
    int64_t kc = cls.kc > 0 ? cls.kc : k;
    Type elem = aType.getElementType();
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    Value rows = memref::DimOp::create(b, loc, a, 0);
    scf::IfOp branch;
    if (!many) {
      Value enough = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sge, rows,
          arith::ConstantIndexOp::create(b, loc, minTokens));
      branch = scf::IfOp::create(b, loc, enough, /*withElseRegion=*/true);
      b.setInsertionPointToStart(branch.thenBlock());
    }
    UnitAttr unit = b.getUnitAttr();
    // Panels of `panel` weight rows, each [K, panel] contiguous, where they
    // divide N (else one [K, N] panel): a register tile's weight rows are
    // then one contiguous stream of kc x panel elements.
    int64_t nr = panel > 0 && panel < n && n % panel == 0 ? panel : n;
    int64_t panels = n / nr;
    Value wt = memref::AllocOp::create(
        b, loc, MemRefType::get({panels, k, nr}, elem));
    // Panel `j` of the packed weight, [rows, nr] from row `k0`.
    auto panelOf = [&](OpBuilder &b, OpFoldResult j, OpFoldResult k0,
                       int64_t rows) -> Value {
      OpFoldResult one = b.getIndexAttr(1);
      SmallVector<OpFoldResult> offsets{j, k0, b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes{one, b.getIndexAttr(rows),
                                      b.getIndexAttr(nr)};
      SmallVector<OpFoldResult> strides(3, one);
      auto type = memref::SubViewOp::inferRankReducedResultType(
          {rows, nr}, cast<MemRefType>(wt.getType()), offsets, sizes, strides);
      return memref::SubViewOp::create(b, loc, type, wt, offsets, sizes,
                                       strides);
    };
    // Each panel transposed from its weight rows (2-D transposes, which
    // tilePacking tiles into 8x8 ones that vectorise).
    {
      OpBuilder::InsertionGuard guard(b);
      Value j = arith::ConstantIndexOp::create(b, loc, 0);
      if (panels > 1) {
        auto loop = scf::ForOp::create(
            b, loc, j, arith::ConstantIndexOp::create(b, loc, panels),
            arith::ConstantIndexOp::create(b, loc, 1));
        b.setInsertionPointToStart(loop.getBody());
        j = loop.getInductionVar();
      }
      Value n0 = arith::MulIOp::create(
          b, loc, j, arith::ConstantIndexOp::create(b, loc, nr));
      Value rows = memref::SubViewOp::create(
          b, loc, w, ArrayRef<OpFoldResult>{n0, b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(nr), b.getIndexAttr(k)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      auto transpose = linalg::TransposeOp::create(
          b, loc, rows, panelOf(b, j, b.getIndexAttr(0), k),
          ArrayRef<int64_t>{1, 0});
      transpose->setAttr(kPackAttr, unit);
    }
    int64_t m = aType.getDimSize(0);
    // One block of all rows when they are static and at most tokenBlock.
    bool blocked = tokenBlock > 0 && (ShapedType::isDynamic(m) || m > tokenBlock);
    // Rows [m0, m0 + size) of the tokens, K block after K block, into the
    // same rows of the output.
    auto multiplyRows = [&](OpBuilder &b, Value m0, OpFoldResult size) {
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      auto view = [&](Value buffer, OpFoldResult row, OpFoldResult col,
                      OpFoldResult height, int64_t width) -> Value {
        return memref::SubViewOp::create(
            b, loc, buffer, ArrayRef<OpFoldResult>{row, col},
            ArrayRef<OpFoldResult>{height, b.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{one, one});
      };
      OpFoldResult row = m0 ? OpFoldResult(m0) : zero;
      Value cRows = m0 ? view(c, row, zero, size, n) : c;
      // Per K block, panel after panel: the rows' K block by the panel's,
      // into the panel's columns of the output rows.
      auto multiply = [&](OpBuilder &b, OpFoldResult k0) {
        Value aBlock = kc == k && !m0 ? a : view(a, row, k0, size, kc);
        auto onePanel = [&](OpBuilder &b, OpFoldResult j, OpFoldResult n0) {
          Value wBlock = panelOf(b, j, k0, kc);
          Value cBlock = panels == 1 ? cRows : view(cRows, zero, n0, size, nr);
          auto packed = linalg::MatmulOp::create(
              b, loc, ValueRange{aBlock, wBlock}, ValueRange{cBlock});
          packed->setAttr(kGemmClassAttr, mm->getAttr(kGemmClassAttr));
          packed->setAttr(kPackedAttr, unit);
        };
        if (panels == 1)
          return onePanel(b, zero, zero);
        auto panelLoop = scf::ForOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, 0),
            arith::ConstantIndexOp::create(b, loc, panels),
            arith::ConstantIndexOp::create(b, loc, 1));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(panelLoop.getBody());
        Value j = panelLoop.getInductionVar();
        Value n0 = arith::MulIOp::create(
            b, loc, j, arith::ConstantIndexOp::create(b, loc, nr));
        onePanel(b, j, n0);
      };
      if (kc == k)
        return multiply(b, zero);
      auto kLoop = scf::ForOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, 0),
          arith::ConstantIndexOp::create(b, loc, k),
          arith::ConstantIndexOp::create(b, loc, kc));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      multiply(b, kLoop.getInductionVar());
    };
    if (!blocked) {
      multiplyRows(b, Value(),
                   ShapedType::isDynamic(m) ? OpFoldResult(rows)
                                            : b.getIndexAttr(m));
    } else {
      // Static blocks when the static rows divide into them; else the last
      // block is smaller (a dynamic size: the register tiles peel it).
      bool exact = !ShapedType::isDynamic(m) && m % tokenBlock == 0;
      Value step = arith::ConstantIndexOp::create(b, loc, tokenBlock);
      // Tasks (the many-tokens copy), else one block after the other.
      Operation *loop;
      Value m0;
      if (many) {
        auto forall = scf::ForallOp::create(
            b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{rows},
            ArrayRef<OpFoldResult>{b.getIndexAttr(tokenBlock)},
            /*outputs=*/ValueRange(), /*mapping=*/std::nullopt);
        loop = forall;
        m0 = forall.getInductionVar(0);
      } else {
        auto forOp = scf::ForOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, 0), rows, step);
        loop = forOp;
        m0 = forOp.getInductionVar();
      }
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&loop->getRegion(0).front());
      OpFoldResult size = b.getIndexAttr(tokenBlock);
      if (!exact) {
        Value left = arith::SubIOp::create(b, loc, rows, m0);
        size = arith::MinSIOp::create(b, loc, left, step).getResult();
      }
      multiplyRows(b, m0, size);
    }
    memref::DeallocOp::create(b, loc, wt);
    if (many)
      mm->erase();
    else
      mm->moveBefore(branch.elseBlock()->getTerminator());
  }
}

/// After the GEMM tiling (and tileLargeStaticOps): vectorise every static
/// linalg op (GEMM tiles become vector.contract) and hoist loop-invariant
/// subviews.
void vectorize(ScriptBuilder &s, Value root) {
  Value funcs = s.match(root, func::FuncOp::getOperationName());
  s.applyPatterns(funcs, [&] {
    transform::ApplyCanonicalizationPatternsOp::create(s.b, s.loc);
  });
  transform::VectorizeChildrenAndApplyPatternsOp::create(
      s.b, s.loc, s.anyOp, funcs,
      /*fold_type_extensions_into_contract=*/UnitAttr());
  // Subviews (the accumulator's among them) that do not depend on the K
  // loop move out of it. (Keeping the accumulator in registers across the
  // K loop is not done here: upstream hoist_redundant_vector_transfers
  // refuses transfers whose source is a subview, which on buffers every
  // tile is; hoistLoopAccumulators does it.)
  Value fors = s.match(root, scf::ForOp::getOperationName());
  transform::ApplyLoopInvariantCodeMotionOp::create(s.b, s.loc, fors);
}

/// After hoistLoopAccumulators: contractions to outer products (FMAs),
/// transfers to 1-D loads and stores.
void lowerVectors(ScriptBuilder &s, Value root) {
  Value funcs = s.match(root, func::FuncOp::getOperationName());
  s.applyPatterns(funcs, [&] {
    OpBuilder &b = s.b;
    Location loc = s.loc;
    transform::ApplyLowerContractionPatternsOp::create(
        b, loc, vector::VectorContractLowering::OuterProduct);
    transform::ApplyTransferPermutationPatternsOp::create(b, loc);
    transform::ApplyLowerTransferPatternsOp::create(b, loc,
                                                    /*max_transfer_rank=*/1);
    transform::ApplyLowerTransposePatternsOp::create(b, loc);
    transform::ApplyLowerOuterProductPatternsOp::create(b, loc);
    transform::ApplyLowerMultiReductionPatternsOp::create(
        b, loc, vector::VectorMultiReductionLowering::InnerReduction);
    transform::ApplyCanonicalizationPatternsOp::create(b, loc);
  });
}

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
/// every parallel loop and kInnerTile of each reduction (a loop over the
/// pieces, accumulating in the output). Every vector is then bounded by
/// the tile sizes, whatever the static sizes. Vectorising a
/// 2048x4096 add whole gives a vector<2048x4096xf32> that the transfer and
/// LLVM lowerings unroll element by element: compile time then grows with
/// the static sizes (minutes for one layer), and the code with it.
LogicalResult tileLargeStaticOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kGemmClassAttr) || op->hasAttr(kPackAttr) ||
        op->hasAttr(kPackedAttr) || !op.hasPureBufferSemantics())
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
      if (ranges[i] <= 1)
        continue;
      if (it != utils::IteratorType::parallel) {
        // A long reduction is a loop over pieces of kInnerTile: whole, a
        // reduction over 2048 static tokens (attention) became a
        // vector<2048x1x1xf32> lowered element by element.
        if (ranges[i] > kInnerTile)
          tiles[i] = innerTile(ranges[i]);
        continue;
      }
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
      return tx::emitErrorAt(op)
             << "internal error: cannot tile this op for vectorisation";
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
    std::optional<SmallVector<int64_t>> fewTile =
        sizes(gemmFewTokenTile, {4, 4, 16}, 0,
              "gemm-few-token-tile must be three sizes rows,cols,lanes (0: "
              "off), lanes a power of two");
    if (!tile || !packedTile || !block || !fewTile)
      return signalPassFailure();
    std::optional<tx::FewTokenTile> fewTokenTile;
    if (llvm::all_of(*fewTile, [](int64_t v) { return v > 0; })) {
      if (!llvm::isPowerOf2_64((*fewTile)[2])) {
        tx::emitErrorAt(getOperation())
            << "gemm-few-token-tile: lanes must be a power of two, not "
            << (*fewTile)[2];
        return signalPassFailure();
      }
      fewTokenTile = tx::FewTokenTile{(*fewTile)[0], (*fewTile)[1],
                                      (*fewTile)[2]};
    }
    // Each GEMM gets the class of its shapes (see GemmClass). With
    // threads, one with few N blocks is split on its token count first
    // (splitOnTokenCount): packed, its token blocks are the tasks.
    SmallVector<GemmClass> classes;
    SmallVector<linalg::MatmulOp> gemms;
    getOperation().walk([&](linalg::MatmulOp mm) { gemms.push_back(mm); });
    for (linalg::MatmulOp mm : gemms) {
      auto a = cast<MemRefType>(mm.getDpsInputs()[0].getType());
      auto w = cast<MemRefType>(mm.getDpsInputs()[1].getType());
      auto c = cast<MemRefType>(mm.getDpsInits()[0].getType());
      // Blocks that both register tiles divide.
      GemmClass gemm;
      gemm.nc = cacheBlock(c.getDimSize(1), (*block)[0],
                           std::lcm((*tile)[1], (*packedTile)[1]));
      gemm.kc = cacheBlock(a.getDimSize(1), (*block)[1],
                           std::lcm((*tile)[2], (*packedTile)[2]));
      if (parallelBlocks)
        gemm.tasks = gemm.nc > 0 ? Tasks::NBlocks : Tasks::None;
      gemm.packable = gemmPackMinTokens > 0 && tx::isTransposedB(mm) &&
                      w.hasStaticShape();
      int64_t rows = a.getDimSize(0);
      bool fewNBlocks =
          gemm.nc <= 0 || c.getDimSize(1) / gemm.nc < kMinNBlockTasks;
      bool tokenBlocks = gemmPackMinTokens > 0 && gemmTokenBlock > 0 &&
                         (ShapedType::isDynamic(rows) ||
                          (rows >= gemmPackMinTokens && rows > gemmTokenBlock));
      if (parallelBlocks && fewNBlocks && tokenBlocks && gemm.packable) {
        GemmClass many = gemm;
        many.tasks = Tasks::TokenBlocks;
        tagClass(splitOnTokenCount(mm, gemmPackMinTokens), classes, many);
        gemm.packable = false;
        gemm.fewTokens = true;
      }
      tagClass(mm, classes, gemm);
    }
    // Cache blocks, then packing, then register tiles.
    if (failed(applyScript([&](ScriptBuilder &s, Value root) {
          for (auto [index, gemm] : llvm::enumerate(classes))
            blockClass(s, root, index, gemm);
        })))
      return signalPassFailure();
    packGemms(getOperation(), gemmPackMinTokens, gemmTokenBlock,
              (*packedTile)[1], classes);
    // The direct GEMMs that run with fewer than gemm-pack-min-tokens rows:
    // the few-token kernel where it applies (the same GEMMs, unblocked
    // along K, with and without threads, so that both sum in the same
    // order).
    if (fewTokenTile) {
      SmallVector<linalg::MatmulOp> direct;
      getOperation().walk([&](linalg::MatmulOp mm) {
        auto index = mm->getAttrOfType<IntegerAttr>(kGemmClassAttr);
        if (index && !mm->hasAttr(kPackedAttr) &&
            classes[index.getInt()].belowPacking())
          direct.push_back(mm);
      });
      tx::TxAliasAnalysis aa;
      for (linalg::MatmulOp mm : direct)
        tx::lowerFewTokenGemm(mm, *fewTokenTile, aa);
    }
    // Register tiles: packed GEMMs (contiguous rows, no transposes) take
    // the wider gemm-packed-tile where it divides their block; the direct
    // GEMMs of packable classes get their K blocks first.
    SmallVector<std::tuple<SmallVector<int64_t>, bool, int64_t>> tiles;
    getOperation().walk([&](linalg::MatmulOp mm) {
      auto index = mm->getAttrOfType<IntegerAttr>(kGemmClassAttr);
      if (!index)
        return;
      const GemmClass &cls = classes[index.getInt()];
      bool packed = mm->hasAttr(kPackedAttr);
      int64_t kBlock = cls.belowPacking() && !packed ? cls.kc : 0;
      auto a = cast<MemRefType>(mm.getDpsInputs()[0].getType());
      auto c = cast<MemRefType>(mm.getDpsInits()[0].getType());
      SmallVector<int64_t> t = *tile;
      if (packed && !c.isDynamicDim(1) &&
          !a.isDynamicDim(1) && c.getDimSize(1) % (*packedTile)[1] == 0 &&
          a.getDimSize(1) % (*packedTile)[2] == 0)
        t = *packedTile;
      int64_t rows = a.getDimSize(0);
      bool peel = ShapedType::isDynamic(rows) || rows % t[0] != 0;
      tagClass(mm, tiles, std::make_tuple(t, peel, kBlock));
    });
    if (failed(applyScript([&](ScriptBuilder &s, Value root) {
          for (auto [index, key] : llvm::enumerate(tiles))
            tileClass(s, root, index, std::get<1>(key), std::get<0>(key),
                      std::get<2>(key));
          tilePacking(s, root);
        })))
      return signalPassFailure();
    if (failed(tileLargeStaticOps(getOperation())))
      return signalPassFailure();
    if (failed(applyScript(vectorize)))
      return signalPassFailure();
    getOperation().walk([](Operation *op) {
      op->removeAttr(kGemmClassAttr);
      op->removeAttr(kPackAttr);
      op->removeAttr(kPackedAttr);
      op->removeAttr(kManyTokensAttr);
    });
    tx::hoistLoopAccumulators(getOperation(), testUnsafeHoist);
    if (failed(applyScript(lowerVectors)))
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
      tx::emitErrorAt(getOperation()) << message;
      return std::nullopt;
    }
    return result;
  }

  /// Builds the transform script `body` and applies it to the module.
  LogicalResult
  applyScript(function_ref<void(ScriptBuilder &, Value root)> body) {
    OwningOpRef<ModuleOp> transformModule = buildScript(&getContext(), body);
    if (failed(verify(*transformModule)))
      return tx::emitErrorAt(getOperation())
             << "internal error: a tiling script does not verify";
    Operation *entry = transform::detail::findTransformEntryPoint(
        getOperation(), *transformModule, "__transform_main");
    if (!entry)
      return failure();
    return transform::applyTransformNamedSequence(
        getOperation(), entry, *transformModule, transform::TransformOptions());
  }
};

} // namespace
