//===- TxAliasAnalysis.cpp - alias facts the tx types tell ----------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/TxDialect.h"

using namespace mlir;
using namespace mlir::tx;

AliasResult TxAliasAnalysis::aliasImpl(Value lhs, Value rhs) {
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
