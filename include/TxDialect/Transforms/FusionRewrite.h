//===- FusionRewrite.h - the stacked-linear rewrite -------------*- C++ -*-===//
//
// Step 5 of the shared mechanism: one merged layer, one projection at the
// insertion point, each original result replaced by its slice.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_TRANSFORMS_FUSIONREWRITE_H
#define TXDIALECT_TRANSFORMS_FUSIONREWRITE_H

#include "TxDialect/Analysis/StackedLinearAnalysis.h"

namespace mlir {
namespace tx {

/// Rewrites the checked `plan`: a new layer named `name` (uniqued in
/// `symbols`) stacking the layers in plan order with `heads[i]` heads each
/// (0: not head-structured; negative: heads of unknown count, recorded as
/// `unknown_heads`; the caller checked that heads divide the rows),
/// flattening layers that are merged already, one `tx.linear` of it before
/// the insertion point, a `tx.slice` per original result (view result types
/// re-inferred down the use chain; a contiguous copy where a use needs the
/// old type), guards folded to constants, old layers and calls erased.
/// Returns the merged call.
LinearOp rewriteStackedLinears(FusionPlan &plan, StringRef name,
                               ArrayRef<int64_t> heads, SymbolTable &symbols,
                               StackedLinearAnalysis &analysis);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_FUSIONREWRITE_H
