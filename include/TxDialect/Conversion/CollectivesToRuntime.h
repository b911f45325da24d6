//===- CollectivesToRuntime.h - collectives to tx_rt_* calls ----*- C++ -*-===//
//
// Lowers tx collectives to calls of the collectives runtime (runtime/,
// libtx_runtime.so). Each call passes unranked memref descriptors through the
// C interface (`_mlir_ciface_tx_rt_<op>_<f32|f16|bf16>`), so the runtime sees
// sizes and strides:
//
//   tx_rt_all_reduce_<t>(in, out, group)
//   tx_rt_reduce_scatter_<t>(in, out, dim, group)
//   tx_rt_all_gather_<t>(in, out, dim, group)
//   tx_rt_rank(group) -> i64                (plain C, no descriptor)
//
// `out` is a fresh contiguous buffer (memref.alloc); `in` may be strided.
// Fused GEMM+collective ops are split back into tx.linear and the collective.
// Collectives over a group of one become copies and need no runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CONVERSION_COLLECTIVESTORUNTIME_H
#define TXDIALECT_CONVERSION_COLLECTIVESTORUNTIME_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
namespace tx {

/// The pass (`tx-lower-collectives-to-runtime`, CollectivesPasses.td).
std::unique_ptr<Pass> createTxLowerCollectivesToRuntime();

/// Registers the pass above.
void registerCollectivesToRuntimePasses();

/// Patterns that lower tx.all_reduce, tx.reduce_scatter, tx.all_gather,
/// tx.all_gather_linear, tx.linear_reduce_scatter and tx.rank. They declare
/// the runtime functions in the enclosing module on demand.
void populateTxCollectivesToRuntimePatterns(RewritePatternSet &patterns);

/// Marks the ops above illegal (and what the patterns create legal).
void configureTxCollectivesToRuntimeTarget(ConversionTarget &target);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CONVERSION_COLLECTIVESTORUNTIME_H
