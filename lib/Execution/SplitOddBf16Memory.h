//===- SplitOddBf16Memory.h - bf16 vectors of 8k+1 lanes, after LLVM's -O -===//

#ifndef TX_EXECUTION_SPLITODDBF16MEMORY_H
#define TX_EXECUTION_SPLITODDBF16MEMORY_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::tx::detail {
/// Splits each load and store of a vector of 8k+1 bf16 lanes into one of
/// its first 8k lanes and one of the last (see the .cpp): run on the
/// optimised LLVM IR, before code generation.
void splitOddBf16MemoryOps(llvm::Module &module);
} // namespace mlir::tx::detail

#endif
