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

/// Whether `memref` is the result of an allocation op (a buffer of its own).
bool isAllocation(Value memref) {
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      memref.getDefiningOp());
}

/// The buffer `memref` is a view of, through view-like ops: an allocation,
/// an argument of a function or a global (none of which aliases a different
/// one of them); null when it is anything else (may alias anything).
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
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
      return memref;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return Value();
    memref = view.getViewSource();
  }
}

/// Splits `dealloc`: every memref that is an allocation's result, occurs
/// once in it and is not the origin of another of its memrefs gets its own
/// op (with the same retained values); the rest stay in one op. The
/// retained values' updated conditions are or-ed. Nothing when a memref's
/// origin is unknown.
void split(bufferization::DeallocOp dealloc, IRRewriter &rewriter) {
  llvm::SmallDenseMap<Value, unsigned, 8> occurrences;
  for (Value memref : dealloc.getMemrefs()) {
    Value base = origin(memref);
    if (!base)
      return;
    ++occurrences[memref];
    if (base != memref)
      ++occurrences[base];
  }
  SmallVector<Value> alone, aloneConditions, rest, restConditions;
  for (auto [memref, cond] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
    bool own = isAllocation(memref) && occurrences[memref] == 1;
    (own ? alone : rest).push_back(memref);
    (own ? aloneConditions : restConditions).push_back(cond);
  }
  if (alone.empty() || (alone.size() == 1 && rest.empty()))
    return;
  rewriter.setInsertionPoint(dealloc);
  Location loc = dealloc.getLoc();
  ValueRange retained = dealloc.getRetained();
  SmallVector<Value> updated;
  auto merge = [&](bufferization::DeallocOp piece) {
    if (updated.empty()) {
      updated = llvm::to_vector(ValueRange(piece.getUpdatedConditions()));
      return;
    }
    for (auto [acc, cond] : llvm::zip(updated, piece.getUpdatedConditions()))
      acc = arith::OrIOp::create(rewriter, loc, acc, cond);
  };
  if (!rest.empty())
    merge(bufferization::DeallocOp::create(rewriter, loc, rest,
                                           restConditions, retained));
  for (auto [memref, cond] : llvm::zip(alone, aloneConditions))
    merge(bufferization::DeallocOp::create(rewriter, loc, memref, cond,
                                           retained));
  rewriter.replaceOp(dealloc, updated);
}

struct TxSplitDeallocsPass
    : tx::impl::TxSplitDeallocsBase<TxSplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (bufferization::DeallocOp dealloc : deallocs)
      split(dealloc, rewriter);
  }
};

} // namespace
