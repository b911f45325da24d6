//===- Weights.h - weights and checkpoints ----------------------*- C++ -*-===//
//
// The weights of a module: the globals tx-to-linalg makes of tx.layer and
// tx.param, and the checkpoint tensors (.npy files, safetensors checkpoints
// or seeded) that fill them.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_WEIGHTS_H
#define TXDIALECT_EXECUTION_WEIGHTS_H

#include "TxDialect/Execution/Elements.h"
#include "TxDialect/Execution/Safetensors.h"
#include "TxDialect/Execution/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
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
  /// Seed of the pseudo-random tensors (when `path` is empty).
  uint64_t seed = 0;
  /// Empty: pseudo-random tensors. Else a directory of `<tensor name>.npy`
  /// files (f32); a `.safetensors` file; a sharded checkpoint's index
  /// (`model.safetensors.index.json`); or a directory that holds
  /// `model.safetensors.index.json` or `model.safetensors` (used first).
  /// F16, BF16 and F64 checkpoint tensors are widened to f32 exactly (F64
  /// rounded to nearest), then stored in the module's element type, which
  /// rounds f32 to f16/bf16 to nearest even as for .npy weights.
  std::string path;
  /// The safetensors checkpoint of `path`, opened by openWeightSource or
  /// the first loadWeight and shared by copies of this source.
  mutable std::shared_ptr<const SafetensorsCheckpoint> checkpoint;
};

/// Checks `source.path` (it exists and is a directory, a .safetensors file
/// or a .json index) and opens a safetensors checkpoint there, checking its
/// headers and shards: a bad checkpoint is an error before any work.
llvm::Error openWeightSource(const WeightSource &source);

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
  /// The checkpoint stores each piece transposed, [columns, piece rows]
  /// (GPT-2's Conv1D weight is [in, out]; the global is [out, in]): read
  /// and transposed one piece at a time (a tx.layer or global marked
  /// tx.checkpoint_transposed).
  bool transposed = false;

  /// The global's size in memory.
  uint64_t bytes() const {
    return Tensor::numElements(shape) * elementBytes(element);
  }
};

/// The weight globals that tx-to-linalg makes of `module`'s tx.layer and
/// tx.param (or that a lowered module already holds, tagged with
/// `tx.checkpoint`). Fails on a weight that is not f32, f16 or bf16.
llvm::Expected<std::vector<WeightBinding>> collectWeightBindings(ModuleOp module);

/// The contents of `binding`'s global, row-major, read from `source`.
llvm::Expected<std::vector<float>> loadWeight(const WeightBinding &binding,
                                              const WeightSource &source);
/// Fills `dest`, the memory of `binding`'s global (its elements in
/// `binding.element`), from `source`, as loadWeight would with
/// storeElements after it, but with no copy of the whole weight: f32 .npy
/// data is read straight into `dest` (one read per file), safetensors
/// tensors of the global's dtype are copied as they are, anything else is
/// converted one checkpoint tensor at a time.
llvm::Error loadWeightInto(const WeightBinding &binding,
                           const WeightSource &source, void *dest);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_WEIGHTS_H
