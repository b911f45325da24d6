//===- InitAllTx.h - registration shared by every tx tool -------*- C++ -*-===//
//
// One place that says what a tx tool knows: tx-opt, the mlir-opt plugin, the
// C API and the execution tools all call these, so they accept the same IR
// and the same passes and pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_INITALLTX_H
#define TXDIALECT_INITALLTX_H

namespace mlir {
class DialectRegistry;
namespace tx {

/// The tx dialect and its external models (no upstream dialects).
void registerTxDialect(DialectRegistry &registry);

/// The tx dialect plus every upstream dialect and extension.
void registerAllTxDialects(DialectRegistry &registry);

/// What compiling tx for the CPU (tx-to-cpu, after tx-fusion and tx-sp) and
/// running the result with mlir::ExecutionEngine need: the tx dialect, the
/// upstream dialects those pipelines go through with the interface models
/// and transform extensions their passes use, and the builtin and LLVM
/// dialects' translations to LLVM IR. No GPU dialect or translation: a
/// tx-to-nvvm lowering needs registerAllTxDialects.
void registerTxCPUDialects(DialectRegistry &registry);

/// Every tx pass and named pipeline (upstream passes not included).
void registerTxPasses();

/// Every tx pass and pipeline plus every upstream pass.
void registerAllTxPasses();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_INITALLTX_H
