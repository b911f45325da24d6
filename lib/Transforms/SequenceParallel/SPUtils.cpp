//===- SPUtils.cpp - helpers shared by the SP passes ----------------------===//

#include "SPUtils.h"

#include "TxDialect/Diagnostics.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tx;

LogicalResult tx::checkFullGraph(ModuleOp module, CompileConfigAttr config,
                                 StringRef passName) {
  if (!config || config.isFullGraph())
    return success();
  std::string ops;
  llvm::raw_string_ostream os(ops);
  llvm::interleaveComma(config.getEffectiveSplittingOps(), os,
                        [&](Attribute a) {
                          os << cast<StringAttr>(a).getValue();
                        });
  if (!config.getSplittingOps())
    os << " (splitting_ops is unset: the default splitting ops)";
  return emitErrorAt(module)
         << "'" << passName
         << "' requires full-graph compilation (module is split at " << ops
         << " without graph partition); set splitting_ops = [], set "
            "graph_partition, or run tx-finalize-config first";
}

FailureOr<CompileConfigAttr> tx::getEnabledFullGraphConfig(ModuleOp module,
                                                           SPFeature feature,
                                                           StringRef passName) {
  CompileConfigAttr config = getCompileConfig(module);
  if (!config)
    return CompileConfigAttr();
  bool enabled = feature == SPFeature::SequenceParallel
                     ? config.getSequenceParallel()
                     : config.getAsyncTp();
  if (!enabled)
    return CompileConfigAttr();
  if (failed(checkFullGraph(module, config, passName)))
    return failure();
  return config;
}

/// Whether `v` is `rank * n` for some `n` (the offset of a rank's slice).
static bool isRankOffset(Value v) {
  auto mul = v.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  return mul.getLhs().getDefiningOp<RankOp>() ||
         mul.getRhs().getDefiningOp<RankOp>();
}

bool tx::isTokenScattered(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto collective = dyn_cast<TxCollectiveOpInterface>(def))
    return collective.getCollectiveKind() == CollectiveKind::ReduceScatter &&
           collective.getCollectiveDim() == kTokenDim;
  if (auto norm = dyn_cast<RMSNormOp>(def))
    return isTokenScattered(norm.getInput());
  if (auto norm = dyn_cast<AddRMSNormOp>(def))
    return isTokenScattered(norm.getInput()) &&
           isTokenScattered(norm.getResidual());
  if (auto sub = dyn_cast<memref::SubViewOp>(def)) {
    SmallVector<OpFoldResult> offsets = sub.getMixedOffsets();
    if (offsets.empty())
      return false;
    auto offset = dyn_cast<Value>(offsets[kTokenDim]);
    return offset && isRankOffset(offset);
  }
  return false;
}
