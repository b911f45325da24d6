//===- Weights.h - weights and checkpoints ----------------------*- C++ -*-===//
//
// The weights of a module: the globals tx-to-linalg makes of tx.layer and
// tx.param, and the checkpoint tensors (.npy files or seeded) that fill them.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_WEIGHTS_H
#define TXDIALECT_EXECUTION_WEIGHTS_H

#include "TxDialect/Execution/Elements.h"
#include "TxDialect/Execution/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
namespace tx {

/// The default value of checkpoint tensor `name` of `shape` for `seed`,
/// scaled like a trained model so activations stay O(1): 2-D and larger
/// tensors u / sqrt(last dim), `*.bias` 0.1 u, other 1-D tensors (norm
/// weights) 1 + 0.1 u, with u = randomTensor(name, shape, seed).
Tensor defaultCheckpointTensor(llvm::StringRef name,
                               std::vector<int64_t> shape, uint64_t seed);

/// Where checkpoint tensors come from.
struct WeightSource {
  /// Seed of the pseudo-random tensors (when `directory` is empty).
  uint64_t seed = 0;
  /// A directory of `<tensor name>.npy` files; empty: pseudo-random.
  std::string directory;
};

/// One piece of a global: rows [rowOffset, rowOffset + rows) are checkpoint
/// tensor `tensor` (the whole global when it is not stacked).
struct WeightPiece {
  std::string tensor;
  int64_t rowOffset = 0;
  int64_t rows = 0;
};

/// A global of the lowered module and the checkpoint tensors that fill it.
struct WeightBinding {
  std::string global;
  std::vector<int64_t> shape;
  std::vector<WeightPiece> pieces;
  ElementType element = ElementType::F32;
};

/// The weight globals that tx-to-linalg makes of `module`'s tx.layer and
/// tx.param (or that a lowered module already holds, tagged with
/// `tx.checkpoint`). Fails on a weight that is not f32, f16 or bf16.
llvm::Expected<std::vector<WeightBinding>> collectWeightBindings(ModuleOp module);

/// The contents of `binding`'s global, row-major, read from `source`.
llvm::Expected<std::vector<float>> loadWeight(const WeightBinding &binding,
                                              const WeightSource &source);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_WEIGHTS_H
