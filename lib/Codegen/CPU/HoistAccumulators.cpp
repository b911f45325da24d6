//===- HoistAccumulators.cpp - GEMM accumulators kept in registers --------===//
//
// After tiling and vectorisation on buffers, a GEMM tile's K loop reads its
// accumulator (a vector.transfer_read of the output tile), adds one
// contraction and writes it back, every iteration. This moves the read
// before the loop and the write after it, carrying the vector through the
// loop, when TxAliasAnalysis proves that nothing else in the loop (nor any
// op nested in it, with its own effects) touches the accumulator's memory.
// (Upstream hoist_redundant_vector_transfers refuses any transfer on a
// subview, which on buffers every tile is.)
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Codegen/CPUCodegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

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
                    tx::TxAliasAnalysis &aa) {
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
             !aa.getModRef(&op, buffer).isNoModRef();
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

void tx::hoistLoopAccumulators(Operation *root,
                               bool unsafeIgnoreRecursiveOps) {
  IRRewriter rewriter(root->getContext());
  tx::TxAliasAnalysis::UnsafeTestOptions unsafe;
  unsafe.ignoreRecursiveOpsOwnEffects = unsafeIgnoreRecursiveOps;
  root->walk([&](func::FuncOp func) {
    tx::TxAliasAnalysis aa(unsafe);
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
