//===- ProfileOps.h - per-op timing of lowered tx code ----------*- C++ -*-===//
//
// The contract between the `tx-profile-ops` pass (tx-to-cpu{profile=true})
// and a host that runs its output. The pass brackets every tx op that
// computes (not the views, symbols and guards, which lower to no work) and
// every function body with
//
//   void tx_rt_profile_begin(int64_t id);
//   void tx_rt_profile_end(int64_t id);
//
// before any lowering, so that the code the op lowers to -- its runtime
// checks, allocations, fills, loops and parallel tasks -- runs between the
// two calls. `id` indexes the module's `tx.profile_ops` table, an ArrayAttr
// with one ArrayAttr of four StringAttr per id: kind ("op" or "function"),
// name ("tx.linear @q_proj", "@forward"), location ("file:line:col") and the
// enclosing function's name. The calls are made by the calling thread (tx
// ops are never inside a parallel loop), one begin/end pair at a time per
// function. Without profile=true nothing is inserted.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CONVERSION_PROFILEOPS_H
#define TXDIALECT_CONVERSION_PROFILEOPS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::tx {

inline constexpr llvm::StringLiteral kProfileBeginFunctionName =
    "tx_rt_profile_begin";
inline constexpr llvm::StringLiteral kProfileEndFunctionName =
    "tx_rt_profile_end";
inline constexpr llvm::StringLiteral kProfileTableAttrName = "tx.profile_ops";

} // namespace mlir::tx

#endif // TXDIALECT_CONVERSION_PROFILEOPS_H
