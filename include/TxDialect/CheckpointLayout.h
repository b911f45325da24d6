//===- CheckpointLayout.h - how a checkpoint stores a weight ----*- C++ -*-===//
//
// The discardable attribute that says a layer's checkpoint weight is stored
// transposed. Shared by the fusion (which stacks only layers stored alike),
// tx-to-linalg (which copies it onto the weight global) and the weight
// loader (which transposes while reading).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CHECKPOINTLAYOUT_H
#define TXDIALECT_CHECKPOINTLAYOUT_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace tx {

/// A unit attribute on a tx.layer (the Python frontend sets it for GPT-2's
/// Conv1D, whose weight is [in, out]) and on its weight global: every
/// checkpoint tensor of the weight is stored transposed, [in_features,
/// rows]; the weight loader transposes it into the [out_features,
/// in_features] weight (no copy of the checkpoint on disk). A merged layer
/// keeps it (only layers stored alike are stacked).
inline constexpr llvm::StringLiteral kCheckpointTransposedAttrName =
    "tx.checkpoint_transposed";

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CHECKPOINTLAYOUT_H
