//===- CPUCodegen.h - linalg to vectorised CPU code -------------*- C++ -*-===//
//
// The CPU code generation of tx-to-cpu (lib/Codegen/CPU): its passes
// (CPUPasses.td: tx-outline-identical-layers, tx-cpu-tile-and-vectorize,
// tx-split-deallocs, tx-cpu-collapse-parallel-loops,
// tx-cpu-split-odd-bf16-vectors,
// tx-lower-structured-control-flow), and the accumulator hoisting and the
// few-token GEMM kernel that tx-cpu-tile-and-vectorize uses.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CODEGEN_CPUCODEGEN_H
#define TXDIALECT_CODEGEN_CPUCODEGEN_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class Operation;
namespace linalg {
class MatmulOp;
} // namespace linalg
namespace tx {
class TxAliasAnalysis;

#define GEN_PASS_DECL
#include "TxDialect/Codegen/CPUPasses.h.inc"

/// Keeps vectorised GEMM accumulators in registers across their K loops:
/// in every scf.for under `root`, a loop-invariant vector.transfer_read and
/// the transfer_write that stores back to the same place move before and
/// after the loop (the vector carried through it) when TxAliasAnalysis
/// proves that no other op in the loop, nor any op nested in one (with its
/// own effects, whatever its traits), may access that memory.
/// `unsafeIgnoreRecursiveOps` is for testing only (the old, wrong check).
void hoistLoopAccumulators(Operation *root,
                           bool unsafeIgnoreRecursiveOps = false);

/// Whether `mm` is y = x W^T: indexing maps (m, k), (n, k), (m, n).
bool isTransposedB(linalg::MatmulOp mm);

/// The tile of the few-token GEMM kernel: `rows` token rows by `cols`
/// weight rows of outputs, `lanes` K elements per vector (a power of two).
struct FewTokenTile {
  int64_t rows = 4, cols = 4, lanes = 16;
};

/// Replaces `mm`, a y += x W^T GEMM on buffers (isTransposedB) with a
/// static `[N, K]` weight, by loops vectorised along K (FewTokenGemm.cpp),
/// and returns true; where `aa` cannot prove the output disjoint from the
/// operands, the loops run when their memory is disjoint at run time and
/// `mm` (kept) when it overlaps. Returns false and leaves `mm` when the
/// kernel does not apply: K not a multiple of `tile.lanes`, rows not
/// contiguous, sums other than f32 of f32/bf16/f16 operands.
bool lowerFewTokenGemm(linalg::MatmulOp mm, const FewTokenTile &tile,
                       TxAliasAnalysis &aa);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CODEGEN_CPUCODEGEN_H
