//===- Tensor.h - host tensors ----------------------------------*- C++ -*-===//
//
// The runner's host tensors: f32, C order; and seeded pseudo-random ones.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_TENSOR_H
#define TXDIALECT_EXECUTION_TENSOR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace tx {

/// A dense host tensor in C (row-major) order. Element type f32; a rank-0
/// tensor is a scalar (an f32 function argument, or a memref<f32>).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<float> data)
      : shape(std::move(shape)), data(std::move(data)) {}
  /// A tensor of `shape` filled with zeros.
  static Tensor zeros(std::vector<int64_t> shape);
  static int64_t numElements(const std::vector<int64_t> &shape);
  /// The most elements a runner tensor may have (16 GiB of f32): larger
  /// shapes are input errors, not allocations that abort the process.
  static constexpr int64_t kMaxElements = int64_t(1) << 32;
  /// numElements, or std::nullopt for a negative dimension or more than
  /// kMaxElements elements (no overflow on the way).
  static std::optional<int64_t>
  checkedNumElements(const std::vector<int64_t> &shape);
  int64_t numElements() const { return numElements(shape); }
  /// "2x64xf32".
  std::string typeString() const;
};

/// Uniform pseudo-random values in [-1, 1), a pure function of (`name`,
/// `seed`, element index): splitmix64 over a hash of the name and the seed.
Tensor randomTensor(llvm::StringRef name, std::vector<int64_t> shape,
                    uint64_t seed);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_TENSOR_H
