//===- HoistAccumulators.cpp - GEMM accumulators kept in registers --------===//
//
// After tiling and vectorisation on buffers, a GEMM tile's K loop reads its
// accumulator (a vector.transfer_read of the output tile), adds one
// contraction and writes it back, every iteration. This moves the read
// before the loop and the write after it, carrying the vector through the
// loop, when AliasAnalysis proves that nothing else in the loop touches the
// accumulator's memory. (Upstream hoist_redundant_vector_transfers refuses
// any transfer on a subview, which on buffers every tile is.)
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Conversion/CpuPipeline.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// Whether `op` (or an op nested in it) may read or write memory that may
/// alias `buffer`, as AliasAnalysis::getModRef answers (ops of unknown
/// effects may). Ops with recursive effects answer ModRef for everything, so
/// their nested ops are asked one by one instead, as the fusion's stability
/// check does.
bool mayAccess(Operation *op, Value buffer, AliasAnalysis &aa) {
  return op
      ->walk([&](Operation *nested) {
        if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
            aa.getModRef(nested, buffer).isNoModRef())
          return WalkResult::advance();
        return WalkResult::interrupt();
      })
      .wasInterrupted();
}

/// The transfer_write in `loop`'s body that writes back what `read` read:
/// same buffer, indices, vector type, map and bounds, after `read`, unmasked.
vector::TransferWriteOp matchingWrite(scf::ForOp loop,
                                      vector::TransferReadOp read) {
  for (Operation *op = read->getNextNode(); op; op = op->getNextNode()) {
    auto write = dyn_cast<vector::TransferWriteOp>(op);
    if (write && write.getBase() == read.getBase() &&
        write.getIndices() == read.getIndices() &&
        write.getVectorType() == read.getVectorType() &&
        write.getPermutationMap() == read.getPermutationMap() &&
        write.getInBoundsAttr() == read.getInBoundsAttr() && !write.getMask())
      return write;
  }
  return {};
}

/// Hoists one read/write pair out of `loop`: the loop that replaces it, or
/// null when there was none to hoist.
scf::ForOp hoistOne(RewriterBase &rewriter, scf::ForOp loop,
                     AliasAnalysis &aa) {
  Block *body = loop.getBody();
  for (auto read : body->getOps<vector::TransferReadOp>()) {
    if (read.getMask() || !isa<MemRefType>(read.getBase().getType()) ||
        llvm::any_of(read->getOperands(), [&](Value v) {
          return !loop.isDefinedOutsideOfLoop(v);
        }))
      continue;
    vector::TransferWriteOp write = matchingWrite(loop, read);
    if (!write)
      continue;
    Value buffer = read.getBase();
    bool clobbered = llvm::any_of(*body, [&](Operation &op) {
      return &op != read.getOperation() && &op != write.getOperation() &&
             mayAccess(&op, buffer, aa);
    });
    if (clobbered)
      continue;
    rewriter.moveOpBefore(read, loop);
    Value stored = write.getVector();
    FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
        rewriter, ValueRange{read.getResult()},
        /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{stored};
        });
    if (failed(carried))
      return {};
    auto newLoop = cast<scf::ForOp>(carried->getOperation());
    rewriter.moveOpAfter(write, newLoop);
    rewriter.modifyOpInPlace(write, [&] {
      write.getValueToStoreMutable().assign(newLoop->getResults().back());
    });
    return newLoop;
  }
  return {};
}

} // namespace

void tx::hoistLoopAccumulators(Operation *root) {
  IRRewriter rewriter(root->getContext());
  root->walk([&](func::FuncOp func) {
    AliasAnalysis aa(func);
    tx::addTxAliasAnalysis(aa);
    // Innermost loops first, so that a pair hoisted out of a loop can move
    // on out of its parent. A hoist replaces only the loop it leaves, so the
    // loops collected around it stay valid.
    SmallVector<scf::ForOp> loops;
    func.walk<WalkOrder::PostOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      while (scf::ForOp replaced = hoistOne(rewriter, loop, aa))
        loop = replaced;
  });
}
