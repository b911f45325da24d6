//===- TxAliasAnalysis.h - alias facts the tx types tell --------*- C++ -*-===//
//
// Upstream LocalAliasAnalysis plus what the tx types say: a `!tx.container`
// (a Python dict or list of activations) is not tensor storage, so it never
// aliases a buffer. Writing a container slot therefore does not write the
// buffers already stored (those are declared written separately by
// `tx.container_set`). And a fresh allocation (memref.alloc/alloca) never
// aliases a module global (memref.get_global), views of either included.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_ANALYSIS_TXALIASANALYSIS_H
#define TXDIALECT_ANALYSIS_TXALIASANALYSIS_H

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"

namespace mlir {
namespace tx {

class TxAliasAnalysis : public LocalAliasAnalysis {
protected:
  AliasResult aliasImpl(Value lhs, Value rhs) override;
};

/// An AliasAnalysis over `op` with TxAliasAnalysis added to the upstream
/// default, so `getModRef` answers with both.
void addTxAliasAnalysis(AliasAnalysis &aa);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_ANALYSIS_TXALIASANALYSIS_H
