//===- TxAliasAnalysis.cpp - alias facts the tx types tell ----------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/TxDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::tx;

/// The buffer `value` is a view of: followed through view-like ops (subview,
/// reshape, cast, tx.view, ...) to the value they start from.
static Value viewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewDest() != value)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Whether `value` is the result of an allocation (memref.alloc, alloca).
static bool isFreshAllocation(Value value) {
  auto effects = value.getDefiningOp<MemoryEffectOpInterface>();
  return effects &&
         effects.getEffectOnValue<MemoryEffects::Allocate>(value).has_value();
}

AliasResult TxAliasAnalysis::aliasImpl(Value lhs, Value rhs) {
  // A fresh allocation is disjoint from a module global (weights, norm
  // parameters after lowering): upstream answers MayAlias, as it knows
  // nothing of what a get_global returns.
  Value lhsRoot = viewRoot(lhs), rhsRoot = viewRoot(rhs);
  if ((isFreshAllocation(lhsRoot) &&
       rhsRoot.getDefiningOp<memref::GetGlobalOp>()) ||
      (isFreshAllocation(rhsRoot) &&
       lhsRoot.getDefiningOp<memref::GetGlobalOp>()))
    return AliasResult::NoAlias;
  // A container's slots hold references to buffers, not tensor storage.
  bool lhsContainer = isa<ContainerType>(lhs.getType());
  bool rhsContainer = isa<ContainerType>(rhs.getType());
  if (lhsContainer != rhsContainer &&
      (isa<BaseMemRefType>(lhs.getType()) || isa<BaseMemRefType>(rhs.getType())))
    return AliasResult::NoAlias;
  return LocalAliasAnalysis::aliasImpl(lhs, rhs);
}

void tx::addTxAliasAnalysis(AliasAnalysis &aa) {
  aa.addAnalysisImplementation(TxAliasAnalysis());
}
