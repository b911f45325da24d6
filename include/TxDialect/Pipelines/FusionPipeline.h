//===- FusionPipeline.h - the tx-fusion pipeline ----------------*- C++ -*-===//
//
// `tx-fusion`: stacked-linear fusion (QKV, MLA, GLU, then merged-column as
// the fallback). Its options are those of tx-fuse-stacked-linears, parsed by
// that pass.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_FUSIONPIPELINE_H
#define TXDIALECT_PIPELINES_FUSIONPIPELINE_H

#include "TxDialect/Transforms/FusionPasses.h"

namespace mlir {
class OpPassManager;
namespace tx {

/// The pipeline's name in pipeline text.
inline constexpr llvm::StringLiteral kTxFusionPipelineName = "tx-fusion";

/// Appends the tx-fusion pipeline to `pm` (a module pass manager).
void buildFusionPipeline(OpPassManager &pm,
                         const TxFuseStackedLinearsOptions &options = {});

/// Registers the `tx-fusion` pipeline.
void registerFusionPipeline();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_PIPELINES_FUSIONPIPELINE_H
