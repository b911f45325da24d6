//===- AsyncTP.cpp - fuse GEMMs with the collectives around them ----------===//
//
// vLLM's AsyncTPPass: all_gather -> GEMM and GEMM -> reduce_scatter become
// one communication+compute op each, so the GEMM can overlap the transfer.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Transforms/SequenceParallel.h"

#include "SPUtils.h"
#include "TxDialect/Transforms/DecisionRemark.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXASYNCTP
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// linear(all_gather(x)) -> all_gather_linear(x), when the gather has no
/// other reader (otherwise every fused op would gather again).
void fuseAllGatherLinear(AllGatherOp ag, StringRef pass) {
  Value gathered = ag.getResult();
  SmallVector<LinearOp> linears;
  for (OpOperand &use : gathered.getUses())
    if (auto lin = dyn_cast<LinearOp>(use.getOwner()))
      linears.push_back(lin);
  if (linears.empty())
    return;
  if (!gathered.hasOneUse()) {
    DecisionRemark(ag, DecisionKind::Missed, "NotFused", pass)
        << "not fused with @" << linears.front().getLayer()
        << ": the gathered buffer has other readers, and fusing "
           "would gather it once per reader";
    return;
  }
  LinearOp lin = linears.front();
  auto inType = cast<MemRefType>(ag.getInput().getType());
  if (static_cast<int64_t>(ag.getDim()) >= inType.getRank() - 1) {
    DecisionRemark(ag, DecisionKind::Missed, "NotFused", pass)
        << "not fused: gathers the feature dimension";
    return;
  }
  OpBuilder b(lin);
  auto fused = AllGatherLinearOp::create(
      b, lin.getLoc(), lin.getResult().getType(), lin.getLayerAttr(),
      ag.getInput(), ag.getDimAttr(), ag.getGroupSizeAttr());
  lin.getResult().replaceAllUsesWith(fused.getResult());
  lin.erase();
  ag.erase();
}

/// reduce_scatter(linear(x)) -> linear_reduce_scatter(x) (sum), when the
/// GEMM's full output has no other reader.
void fuseLinearReduceScatter(ReduceScatterOp rs, StringRef pass) {
  auto lin = rs.getInput().getDefiningOp<LinearOp>();
  if (!lin)
    return;
  if (!lin.getResult().hasOneUse()) {
    DecisionRemark(rs, DecisionKind::Missed, "NotFused", pass)
        << "not fused with @" << lin.getLayer()
        << ": its unreduced output has other readers";
    return;
  }
  auto inType = cast<MemRefType>(rs.getInput().getType());
  if (static_cast<int64_t>(rs.getDim()) >= inType.getRank() - 1) {
    DecisionRemark(rs, DecisionKind::Missed, "NotFused", pass)
        << "not fused: scatters the feature dimension";
    return;
  }
  OpBuilder b(rs);
  auto fused = LinearReduceScatterOp::create(
      b, rs.getLoc(), rs.getResult().getType(), lin.getLayerAttr(),
      lin.getInput(), rs.getDimAttr(), rs.getGroupSizeAttr());
  rs.getResult().replaceAllUsesWith(fused.getResult());
  rs.erase();
  lin.erase();
}

struct AsyncTPPass : public tx::impl::TxAsyncTPBase<AsyncTPPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileConfigAttr> config =
        getEnabledFullGraphConfig(module, SPFeature::AsyncTP, getArgument());
    if (failed(config))
      return signalPassFailure();
    if (!*config)
      return;
    SmallVector<AllGatherOp> gathers;
    SmallVector<ReduceScatterOp> scatters;
    module.walk([&](Operation *op) {
      if (auto ag = dyn_cast<AllGatherOp>(op))
        gathers.push_back(ag);
      else if (auto rs = dyn_cast<ReduceScatterOp>(op))
        scatters.push_back(rs);
    });
    for (ReduceScatterOp rs : scatters)
      fuseLinearReduceScatter(rs, getArgument());
    for (AllGatherOp ag : gathers)
      fuseAllGatherLinear(ag, getArgument());
  }
};

} // namespace
