//===- CollapseParallelLoops.cpp - one dimension per scf.parallel ---------===//
//
// tx-cpu-collapse-parallel-loops: each multi-dimensional scf.parallel becomes
// a one-dimensional loop over the product of its trip counts, so that
// async-parallel-for never takes its block-aligned dispatch, which runs some
// iterations twice (see the pass description in CPUPasses.td).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUCOLLAPSEPARALLELLOOPS
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {
struct TxCpuCollapseParallelLoopsPass
    : tx::impl::TxCpuCollapseParallelLoopsBase<TxCpuCollapseParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1)
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      std::vector<unsigned> all(loop.getNumLoops());
      for (unsigned i = 0; i < all.size(); ++i)
        all[i] = i;
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};
} // namespace
