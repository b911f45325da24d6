//===- TxToLinalg.cpp - the tx-to-linalg pass -----------------------------===//
//
// Symbols become memref.globals, guards become constants, then a dialect
// conversion lowers every tx op that touches buffers (ComputePatterns.cpp,
// ElementwisePatterns.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/CheckpointLayout.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/FoldUtils.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXTOLINALG
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace mlir::tx::detail {
void populateComputePatterns(RewritePatternSet &patterns, bool rows = false);
void populateLayerNormPatterns(RewritePatternSet &patterns, bool rows = false);
void populateElementwisePatterns(RewritePatternSet &patterns,
                                 bool rows = false);
void populateRowAttentionPatterns(RewritePatternSet &patterns);
} // namespace mlir::tx::detail

std::string tx::getWeightGlobalName(StringRef layer) {
  return ("__tx_w_" + layer).str();
}
std::string tx::getBiasGlobalName(StringRef layer) {
  return ("__tx_b_" + layer).str();
}
std::string tx::getParamGlobalName(StringRef param) {
  return ("__tx_p_" + param).str();
}

/// An uninitialized, public (so that a runner can find and fill it by name)
/// global of `type`, before `anchor`.
static memref::GlobalOp createGlobal(OpBuilder &b, Operation *anchor,
                                     StringRef name, MemRefType type,
                                     StringRef checkpoint,
                                     ArrayAttr stacking = {}) {
  b.setInsertionPoint(anchor);
  auto global = memref::GlobalOp::create(
      b, anchor->getLoc(), name, /*sym_visibility=*/StringAttr(), type,
      /*initial_value=*/b.getUnitAttr(), /*constant=*/false,
      /*alignment=*/b.getI64IntegerAttr(64));
  global->setAttr(kCheckpointAttrName, b.getStringAttr(checkpoint));
  if (stacking)
    global->setAttr(kStackingAttrName, stacking);
  return global;
}

void tx::lowerTxSymbolsToGlobals(ModuleOp module) {
  OpBuilder b(module.getContext());
  SymbolTable symbols(module);
  for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
    if (auto layer = dyn_cast<LayerOp>(op)) {
      Type t = layer.getDtype();
      std::string prefix = layer.getCheckpointPrefix().str();
      ArrayAttr stacking = layer.getStacking() ? *layer.getStacking()
                                               : ArrayAttr();
      std::string w = getWeightGlobalName(layer.getSymName());
      if (!symbols.lookup(w)) {
        auto global = createGlobal(
            b, layer, w,
            MemRefType::get({static_cast<int64_t>(layer.getOutFeatures()),
                             static_cast<int64_t>(layer.getInFeatures())},
                            t),
            prefix + ".weight", stacking);
        if (layer->hasAttr(kCheckpointTransposedAttrName))
          global->setAttr(kCheckpointTransposedAttrName, b.getUnitAttr());
      }
      std::string bias = getBiasGlobalName(layer.getSymName());
      if (layer.getBias() && !symbols.lookup(bias))
        createGlobal(b, layer, bias,
                     MemRefType::get({static_cast<int64_t>(layer.getOutFeatures())}, t),
                     prefix + ".bias", stacking);
    } else if (auto param = dyn_cast<ParamOp>(op)) {
      std::string p = getParamGlobalName(param.getSymName());
      if (!symbols.lookup(p))
        createGlobal(b, param, p, cast<MemRefType>(param.getType()),
                     param.getCheckpointName());
    }
  }
}

LogicalResult tx::lowerTxGuards(ModuleOp module) {
  bool failed = false;
  SymbolTableCollection symbols;
  module.walk([&](GuardOp guard) {
    auto ref = guard.getRef().getDefiningOp<LayerRefOp>();
    Operation *sym =
        ref ? symbols.lookupNearestSymbolFrom(guard, ref.getLayerAttr())
            : nullptr;
    if (!sym || !isa<LayerOp, NoneLayerOp>(sym)) {
      guard.emitOpError("cannot be lowered: its reference is not a "
                        "tx.layer_ref of a known layer");
      failed = true;
      return;
    }
    // eq_none / ne_none never fold during optimisation (a subclass may
    // override __eq__), but the layers of a tx module are plain nn.Linear or
    // None, which do not override it: at run time `x == None` is `x is None`.
    OpBuilder b(guard);
    Value c = arith::ConstantOp::create(
        b, guard.getLoc(), b.getBoolAttr(guard.evaluate(isa<LayerOp>(sym))));
    guard.replaceAllUsesWith(c);
    guard.erase();
  });
  module.walk([&](LayerRefOp ref) {
    if (ref.use_empty()) {
      ref.erase();
      return;
    }
    InFlightDiagnostic diag =
        ref.emitOpError("cannot be lowered: the reference escapes");
    diag.attachNote(ref->use_begin()->getOwner()->getLoc())
        << "used here by '" << ref->use_begin()->getOwner()->getName() << "'";
    failed = true;
  });
  return failure(failed);
}

/// Keeps only the branch that runs of each scf.if on a constant (a lowered
/// guard, alone or combined by i1 logic that folds): the other may hold
/// what cannot run, e.g. the opaque call of a None layer (`self.v_proj(x)`
/// behind `self.v_proj is not None`).
static void foldStaticBranches(ModuleOp module) {
  // Conditions that combine a lowered guard with other i1 values (`self.k
  // is not None and flag`: andi %false, %flag) fold to constants first.
  OperationFolder folder(module.getContext());
  SmallVector<Operation *> logic;
  module.walk([&](Operation *op) {
    if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::SelectOp>(op) &&
        op->getResult(0).getType().isInteger(1))
      logic.push_back(op);
  });
  for (Operation *op : logic)
    (void)folder.tryToFold(op);
  SmallVector<scf::IfOp> ifs;
  module.walk([&](scf::IfOp op) {
    if (matchPattern(op.getCondition(), m_Constant()))
      ifs.push_back(op);
  });
  // Post-order: nested ifs first, so erasing an outer one is safe.
  for (scf::IfOp op : ifs) {
    bool taken = matchPattern(op.getCondition(), m_One());
    Region &region = taken ? op.getThenRegion() : op.getElseRegion();
    if (region.empty()) {
      op.erase();
      continue;
    }
    Block &block = region.front();
    auto yield = cast<scf::YieldOp>(block.getTerminator());
    SmallVector<Value> results(yield.getOperands());
    yield.erase();
    op->getBlock()->getOperations().splice(op->getIterator(),
                                           block.getOperations());
    op.replaceAllUsesWith(results);
    op.erase();
  }
}

void tx::eraseTxSymbols(ModuleOp module) {
  // Every symbol name referenced anywhere in the module, nested symbol
  // tables included, gathered in one walk (symbolKnownUseEmpty per symbol
  // walks the module once per layer: quadratic). A reference of the same
  // name from elsewhere only keeps a symbol.
  llvm::DenseSet<StringAttr> used;
  module->walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
      used.insert(ref.getRootReference());
    });
  });
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    if (isa<LayerOp, NoneLayerOp, ParamOp>(op) &&
        !used.contains(SymbolTable::getSymbolName(&op)))
      op.erase();
}

/// A collective that stays for a later lowering: more than one rank.
static bool isMultiRankCollective(Operation *op) {
  if (auto collective = dyn_cast<TxCollectiveOpInterface>(op))
    return collective.getGroupSize() != 1;
  if (auto rank = dyn_cast<RankOp>(op))
    return rank.getGroupSize() != 1;
  return false;
}

LogicalResult tx::checkTxLowerable(ModuleOp module, bool allowCollectives) {
  bool failed = false;
  module.walk([&](Operation *op) {
    if (isa<OpaqueCallOp>(op)) {
      op->emitOpError("cannot be lowered to linalg: the callee is unknown");
      failed = true;
    } else if (std::string why = detail::dynamicHeadShape(op); !why.empty()) {
      op->emitOpError("cannot be lowered to linalg: ") << why;
      failed = true;
    } else if (!allowCollectives && isMultiRankCollective(op)) {
      op->emitOpError("cannot be lowered to linalg: a collective over more "
                      "than one rank needs the collectives runtime lowering");
      failed = true;
    }
  });
  return failure(failed);
}

void tx::populateTxToLinalgPatterns(RewritePatternSet &patterns) {
  detail::populateComputePatterns(patterns);
  detail::populateLayerNormPatterns(patterns);
  detail::populateElementwisePatterns(patterns);
}

void tx::configureTxToLinalgTarget(ConversionTarget &target,
                                   bool allowCollectives) {
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, memref::MemRefDialect,
                         scf::SCFDialect, func::FuncDialect,
                         vector::VectorDialect>();
  if (allowCollectives)
    target.addDynamicallyLegalDialect<TxDialect>(
        [](Operation *op) { return isMultiRankCollective(op); });
  else
    target.addIllegalDialect<TxDialect>();
  // Module-level symbols are erased after the conversion.
  target.addLegalOp<LayerOp, NoneLayerOp, ParamOp>();
}

namespace {
struct TxToLinalgPass : tx::impl::TxToLinalgBase<TxToLinalgPass> {
  using TxToLinalgBase::TxToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Guards first: a branch they exclude need not be lowerable.
    if (failed(lowerTxGuards(module)))
      return signalPassFailure();
    foldStaticBranches(module);
    if (failed(checkTxLowerable(module, allowCollectives)) ||
        failed(tx::detail::lowerTxContainers(
            module, testBreakContainers == "swap-get")))
      return signalPassFailure();
    lowerTxSymbolsToGlobals(module);

    ConversionTarget target(getContext());
    configureTxToLinalgTarget(target, allowCollectives);
    RewritePatternSet patterns(&getContext());
    tx::detail::populateComputePatterns(patterns, rowLoops);
    tx::detail::populateLayerNormPatterns(patterns, rowLoops);
    tx::detail::populateElementwisePatterns(patterns, rowLoops);
    if (rowAttention)
      tx::detail::populateRowAttentionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    tx::detail::finalizeRuntimeChecks(module, runtimeChecks);
    eraseTxSymbols(module);
  }
};
} // namespace
