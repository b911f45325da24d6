//===- CPUCodegen.h - linalg to vectorised CPU code -------------*- C++ -*-===//
//
// The CPU code generation of tx-to-cpu (lib/Codegen/CPU): its passes
// (CPUPasses.td: tx-outline-identical-layers, tx-cpu-tile-and-vectorize,
// tx-split-deallocs, tx-cpu-collapse-parallel-loops,
// tx-cpu-split-odd-bf16-vectors,
// tx-lower-structured-control-flow) and the accumulator
// hoisting tx-cpu-tile-and-vectorize runs.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CODEGEN_CPUCODEGEN_H
#define TXDIALECT_CODEGEN_CPUCODEGEN_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class Operation;
namespace tx {

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

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CODEGEN_CPUCODEGEN_H
