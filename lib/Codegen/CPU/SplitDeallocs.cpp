//===- SplitDeallocs.cpp - one dealloc per distinct allocation ------------===//
//
// tx-split-deallocs: splits bufferization.dealloc ops so that every memref
// that is the result of its own allocation is freed by its own op. This is
// the split buffer-deallocation-simplification makes, found in time linear
// in the memrefs of the op instead of one alias query per pair of them.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXSPLITDEALLOCS
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// Where the memrefs of a dealloc come from, as far as that proves them
/// distinct buffers.
class Origins {
public:
  /// The buffer `memref` is a view of, through view-like ops and the base
  /// buffer of memref.extract_strided_metadata: an allocation, the result of
  /// a call that returns fresh allocations (fresh), an argument of a
  /// function or a global (none of which aliases a different one of them);
  /// null when it is anything else (may alias anything).
  Value origin(Value memref) {
    while (true) {
      Operation *def = memref.getDefiningOp();
      if (!def) {
        auto arg = cast<BlockArgument>(memref);
        return isa<func::FuncOp>(arg.getOwner()->getParentOp()) &&
                       arg.getOwner()->isEntryBlock()
                   ? memref
                   : Value();
      }
      if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def) ||
          isFreshCallResult(memref))
        return memref;
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def)) {
        if (memref != meta.getBaseBuffer())
          return Value();
        memref = meta.getSource();
        continue;
      }
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        return Value();
      memref = view.getViewSource();
    }
  }

  /// Whether the buffer `base` (an origin) is one of its own: allocated
  /// here or by the call that returned it.
  bool isFresh(Value base) {
    return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
               base.getDefiningOp()) ||
           isFreshCallResult(base);
  }

private:
  /// A result of a func.call whose callee returns, at every func.return and
  /// in every result position, a memref.alloc of its own body that it
  /// returns in no other position: each call then returns buffers no other
  /// value of the caller aliases (ownership-based deallocation hands them
  /// to the caller).
  bool isFreshCallResult(Value v) {
    auto result = dyn_cast<OpResult>(v);
    auto call = result ? dyn_cast<func::CallOp>(result.getOwner()) : nullptr;
    if (!call)
      return false;
    auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return false;
    auto [it, inserted] = freshResults.try_emplace(callee, SmallVector<bool>());
    if (inserted)
      it->second = computeFreshResults(callee);
    unsigned i = result.getResultNumber();
    return i < it->second.size() && it->second[i];
  }

  static SmallVector<bool> computeFreshResults(func::FuncOp callee) {
    SmallVector<bool> fresh(callee.getNumResults(), true);
    bool sawReturn = false;
    callee.walk([&](func::ReturnOp ret) {
      if (ret->getParentOp() != callee)
        return;
      sawReturn = true;
      SmallVector<Operation *> allocs;
      for (auto [i, operand] : llvm::enumerate(ret.getOperands())) {
        Operation *def = operand.getDefiningOp();
        auto alloc = dyn_cast_or_null<memref::AllocOp>(def);
        if (!alloc || llvm::is_contained(allocs, def))
          fresh[i] = false;
        allocs.push_back(def);
      }
    });
    if (!sawReturn)
      fresh.assign(fresh.size(), false);
    return fresh;
  }

  SymbolTableCollection symbols;
  llvm::DenseMap<Operation *, SmallVector<bool>> freshResults;
};

/// Splits `dealloc`: every memref that is a fresh buffer (or the base
/// buffer of one), the only memref of it in the op, gets its own op (with
/// the same retained values); the rest stay in one op. The retained
/// values' updated conditions are or-ed. Nothing when a memref's origin is
/// unknown.
void split(bufferization::DeallocOp dealloc, IRRewriter &rewriter,
           Origins &origins) {
  llvm::SmallDenseMap<Value, unsigned, 8> occurrences;
  SmallVector<Value> bases;
  for (Value memref : dealloc.getMemrefs()) {
    Value base = origins.origin(memref);
    if (!base)
      return;
    ++occurrences[base];
    bases.push_back(base);
  }
  SmallVector<Value> alone, aloneConditions, rest, restConditions;
  for (auto [memref, cond, base] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions(), bases)) {
    // The buffer itself or the base buffer of its metadata: a whole
    // allocation (not a view into one).
    bool whole = memref == base ||
                 memref.getDefiningOp<memref::ExtractStridedMetadataOp>();
    bool own = whole && origins.isFresh(base) && occurrences[base] == 1;
    (own ? alone : rest).push_back(memref);
    (own ? aloneConditions : restConditions).push_back(cond);
  }
  if (alone.empty())
    return;
  // The retained values each fresh memref may alias: a retained value whose
  // origin is known and another buffer cannot be it, and keeping it would
  // cost the simplification an alias query through every call before it.
  ValueRange retained = dealloc.getRetained();
  SmallVector<Value> retainedBases =
      llvm::map_to_vector(retained, [&](Value r) { return origins.origin(r); });
  SmallVector<SmallVector<unsigned>> kept;
  bool pruned = false;
  for (Value memref : alone) {
    Value base = origins.origin(memref);
    SmallVector<unsigned> &k = kept.emplace_back();
    for (auto [j, rb] : llvm::enumerate(retainedBases))
      if (!rb || rb == base)
        k.push_back(j);
    pruned |= k.size() != retained.size();
  }
  if (alone.size() == 1 && rest.empty() && !pruned)
    return;
  rewriter.setInsertionPoint(dealloc);
  Location loc = dealloc.getLoc();
  // The updated condition of each retained value: the or of the pieces'
  // (false where no piece keeps it: none of their memrefs is it).
  SmallVector<Value> updated(retained.size());
  auto merge = [&](bufferization::DeallocOp piece, ArrayRef<unsigned> which) {
    for (auto [j, cond] : llvm::zip(which, piece.getUpdatedConditions()))
      updated[j] = updated[j] ? Value(arith::OrIOp::create(
                                    rewriter, loc, updated[j], cond))
                              : Value(cond);
  };
  if (!rest.empty())
    merge(bufferization::DeallocOp::create(rewriter, loc, rest,
                                           restConditions, retained),
          llvm::to_vector(llvm::seq<unsigned>(0, retained.size())));
  for (auto [memref, cond, which] : llvm::zip(alone, aloneConditions, kept)) {
    SmallVector<Value> keptValues = llvm::map_to_vector(
        which, [&](unsigned j) { return retained[j]; });
    merge(bufferization::DeallocOp::create(rewriter, loc, memref, cond,
                                           keptValues),
          which);
  }
  for (Value &u : updated)
    if (!u)
      u = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(false));
  rewriter.replaceOp(dealloc, updated);
}

struct TxSplitDeallocsPass
    : tx::impl::TxSplitDeallocsBase<TxSplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    IRRewriter rewriter(&getContext());
    Origins origins;
    for (bufferization::DeallocOp dealloc : deallocs)
      split(dealloc, rewriter, origins);
  }
};

} // namespace
