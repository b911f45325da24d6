//===- SPUtils.h - helpers shared by the SP passes --------------*- C++ -*-===//

#ifndef TX_LIB_TRANSFORMS_SEQUENCEPARALLEL_SPUTILS_H
#define TX_LIB_TRANSFORMS_SEQUENCEPARALLEL_SPUTILS_H

#include "TxDialect/TxDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::tx {

/// The full-graph gate of the SP and async-TP passes (the seed's "assert in
/// the pass, not only in the config"): fails with an error on the module when
/// `config` splits it piecewise without graph partition.
LogicalResult checkFullGraph(ModuleOp module, CompileConfigAttr config,
                             StringRef passName);

/// The setting of `tx.config` that switches an SP pass on.
enum class SPFeature { SequenceParallel, AsyncTP };

/// The "enabled and full graph" gate every SP pass opens with: the module's
/// config when it enables `feature` and the module is one full graph; a null
/// config (the pass has nothing to do) when the module has no config or the
/// feature is off; failure, with the error of `checkFullGraph` on the module,
/// when the feature is on but the module is compiled piecewise.
FailureOr<CompileConfigAttr> getEnabledFullGraphConfig(ModuleOp module,
                                                       SPFeature feature,
                                                       StringRef passName);

/// The token dimension every SP rewrite scatters along.
constexpr int64_t kTokenDim = 0;

/// Whether `v` holds only this rank's token slice: a reduce-scatter result,
/// a norm computed from such a slice, or a rank-offset subview.
bool isTokenScattered(Value v);

} // namespace mlir::tx

#endif // TX_LIB_TRANSFORMS_SEQUENCEPARALLEL_SPUTILS_H
