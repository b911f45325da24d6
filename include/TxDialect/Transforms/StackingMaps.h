//===- StackingMaps.h - stacking maps for weight loaders --------*- C++ -*-===//
//
// How checkpoint tensors fill merged layers, as JSON, for a weight loader
// (the C API and the Python package call this).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_TRANSFORMS_STACKINGMAPS_H
#define TXDIALECT_TRANSFORMS_STACKINGMAPS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tx {

/// Writes, for every merged `tx.layer` of `module`:
///   {"layers": [{"name", "in_features", "out_features", "bias",
///     "tensors": [{"tensor": "<prefix>.weight", "source", "rows": [b, e)}],
///     "ranks": [{"rank": r, "rows": N_r, "parts": [{"tensor",
///       "rows": [b, e) of the original, "offset": row in the rank shard}]}]
///   }]}
/// With `tpSize` N, the rank-r shard of a part of `size` rows is rows
/// [r*size/N, (r+1)*size/N); when 0 < heads < N the part's head
/// h = r*heads/N is replicated: rows [h*size/heads, (h+1)*size/heads).
/// A head is never split: fails with a diagnostic on the layer when the
/// rows or heads do not divide, heads do not replicate evenly, or (N > 1) a
/// part is made of heads of unknown count; and on the module when N is not
/// in [1, kMaxStackingTPSize]. Nothing is written on failure.
LogicalResult exportStackingMaps(ModuleOp module, int64_t tpSize,
                                 llvm::raw_ostream &os);

/// The largest tensor-parallel size exportStackingMaps accepts (the JSON
/// lists every rank).
constexpr int64_t kMaxStackingTPSize = 1 << 16;

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_STACKINGMAPS_H
